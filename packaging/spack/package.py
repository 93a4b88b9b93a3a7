# Spack package for hpclaunch (docs/install.md). Copy it into a Spack repository of your own:
#   spack repo create ~/spack-repo && mkdir -p ~/spack-repo/packages/hpclaunch
#   cp packaging/spack/package.py ~/spack-repo/packages/hpclaunch/ && spack repo add ~/spack-repo
#   spack install hpclaunch            # or hpclaunch+static, hpclaunch+trainer
# Checked here by tests/integration/t0705-packaging.sh: the file compiles, and the CMake arguments it gives for
# each variant configure this source tree. Not run under a real Spack here (no network): the dependency names are
# Spack's builtin ones, their variants unverified.

from spack.package import *


class Hpclaunch(CMakePackage):
    """Launches PyTorch-style distributed training on HPC clusters: renders and submits Slurm or PBS job
    scripts for known sites, sets torch's rendezvous variables in each task, and runs a torchrun-like elastic
    agent per node. Optionally builds hpclaunch-train, a LibTorch DDP trainer."""

    # The project has no public address yet: set git (and versions with their commits) when it does. Until
    # then, point Spack at a checkout: `spack develop --path /path/to/hpclaunch hpclaunch@main`.
    homepage = "https://github.com/hpclaunch/hpclaunch"
    git = "https://github.com/hpclaunch/hpclaunch.git"

    version("main", branch="main")

    variant("trainer", default=False, description="Build hpclaunch-train and hpclaunch-probe against LibTorch")
    variant("static", default=False,
            description="A fully static hpclaunch to copy to any Linux of the same architecture (launcher only)")
    variant("plot", default=True, when="~static", description="hpclaunch plot (PNG/SVG) with PLplot")

    conflicts("+trainer", when="+static", msg="a static build is the launcher alone; build the trainer apart")

    depends_on("cxx", type="build")
    depends_on("cmake@3.22:", type="build")
    depends_on("pkgconfig", type="build")  # hwloc (and PLplot with +plot) are found with pkg-config
    depends_on("git", type="build")  # `hpclaunch --version` names the commit (git describe at build time)

    depends_on("yaml-cpp@0.7:")
    depends_on("fmt@9:")
    depends_on("cli11@2.1:", type="build")
    depends_on("nlohmann-json@3.10:", type="build")
    depends_on("boost@1.74:+filesystem")
    depends_on("openssl@3:")  # libcrypto: the agents' HMAC-SHA256
    depends_on("hwloc@2:")  # the agent's --numa-binding; +static links its libhwloc.a
    depends_on("plplot", when="+plot")
    # A static link needs the libraries' archives.
    depends_on("yaml-cpp~shared", when="+static")
    depends_on("boost~shared", when="+static")
    depends_on("openssl~shared", when="+static")
    # LibTorch comes with PyTorch (its share/cmake/Torch); a CUDA build of it gives the trainer NCCL.
    depends_on("py-torch", when="+trainer")
    depends_on("doctest", type="test")

    # kainjow's one-header mustache library is in Debian but not in Spack: fetched beside the sources.
    resource(name="kainjow-mustache", git="https://github.com/kainjow/Mustache.git", tag="v4.1",
             destination="third_party", placement="kainjow")

    def cmake_args(self):
        args = [
            self.define_from_variant("HPCLAUNCH_BUILD_TRAINER", "trainer"),
            self.define_from_variant("HPCLAUNCH_STATIC", "static"),
            # The tests link the shared libraries: none beside the static launcher (CMakeLists.txt refuses both).
            self.define("HPCLAUNCH_BUILD_TESTS", self.run_tests and self.spec.satisfies("~static")),
            self.define("KAINJOW_MUSTACHE_INCLUDE_DIR", join_path(self.stage.source_path, "third_party")),
        ]
        if self.spec.satisfies("~static"):
            args.append(self.define_from_variant("HPCLAUNCH_PLOT", "plot"))
        return args
