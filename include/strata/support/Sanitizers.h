#pragma once

// Which sanitizer this translation unit is built with. GCC defines __SANITIZE_ADDRESS__ and
// __SANITIZE_THREAD__; clang answers only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_ADDRESS_SANITIZER 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define STRATA_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRATA_THREAD_SANITIZER 1
#endif
#endif
