/* headless — placeholder until implemented. */
#include "config.h"
typedef int headless_placeholder;
