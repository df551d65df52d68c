/* gate — placeholder until implemented. */
#include "config.h"
typedef int gate_placeholder;
