// hopper-async version; plain C++ so host code and the model can include it.
#pragma once
#define HOPPER_VERSION_MAJOR 0
#define HOPPER_VERSION_MINOR 1
#define HOPPER_VERSION_PATCH 0
