// Linked into the static hpclaunch only (cmake/StaticBuild.cmake). Debian's libhwloc.a (agent --numa-binding)
// calls libudev to name block devices, and Debian ships no libudev.a. hwloc asks udev_new() first and goes on
// without udev when it returns null, which is what these stand-ins make it do; the others are never reached.
extern "C" {
struct udev;
struct udev_device;
udev* udev_new() { return nullptr; }
udev* udev_unref(udev*) { return nullptr; }
udev_device* udev_device_new_from_subsystem_sysname(udev*, const char*, const char*) { return nullptr; }
udev_device* udev_device_unref(udev_device*) { return nullptr; }
const char* udev_device_get_property_value(udev_device*, const char*) { return nullptr; }
}
