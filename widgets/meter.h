/* meter — a one-row bar showing a fraction (spend against a budget, progress). */
#ifndef PEVTUI_METER_H
#define PEVTUI_METER_H

/* Draws a bar `w` columns wide at (y, x) filled to `frac` (clamped to 0..1); the bar
 * turns to the over role when frac > 1. */
void meter_draw(int y, int x, int w, double frac);

#endif
