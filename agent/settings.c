/* settings — placeholder until implemented. */
#include "config.h"
typedef int settings_placeholder;
