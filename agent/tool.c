/* tool — placeholder until implemented. */
#include "config.h"
typedef int tool_placeholder;
