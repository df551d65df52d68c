/* plan — placeholder until implemented. */
#include "config.h"
typedef int plan_placeholder;
