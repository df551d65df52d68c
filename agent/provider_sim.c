/* provider_sim — placeholder until implemented. */
#include "config.h"
typedef int provider_sim_placeholder;
