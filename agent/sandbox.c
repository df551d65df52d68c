/* sandbox — placeholder until implemented. */
#include "config.h"
typedef int sandbox_placeholder;
