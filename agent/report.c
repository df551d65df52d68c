/* report — placeholder until implemented. */
#include "config.h"
typedef int report_placeholder;
