/* tool_lookup — placeholder until implemented. */
#include "config.h"
typedef int tool_lookup_placeholder;
