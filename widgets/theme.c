/* theme — placeholder until implemented. */
#include "config.h"
typedef int theme_placeholder;
