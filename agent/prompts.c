/* prompts — placeholder until implemented. */
#include "config.h"
typedef int prompts_placeholder;
