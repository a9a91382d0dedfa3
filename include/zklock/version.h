// zklock/version.h: the library's version, in one place (CMake reads it from here).
#pragma once

#define ZKLOCK_VERSION_MAJOR 0
#define ZKLOCK_VERSION_MINOR 1
#define ZKLOCK_VERSION_PATCH 0
#define ZKLOCK_VERSION_STRING "0.1.0"
