/* cost — placeholder until implemented. */
#include "config.h"
typedef int cost_placeholder;
