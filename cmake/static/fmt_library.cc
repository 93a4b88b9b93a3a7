// fmt's compiled part, for the static hpclaunch (cmake/StaticBuild.cmake): Debian's libfmt-dev ships libfmt.so but
// no libfmt.a, and building every unit with FMT_HEADER_ONLY made each object of the static build differ from the
// dynamic build's, so none came from ccache (a second full compile of the launcher). This unit is what fmt's own
// src/format.cc is: format-inl.h compiled once (its FMT_FUNC functions out of line, as FMT_HEADER_ONLY is not
// defined) and the templates that format.h declares `extern` instantiated here.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

#ifndef FMT_STATIC_THOUSANDS_SEPARATOR
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
#endif

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
