# SPDX-License-Identifier: GPL-2.0
# One A/B table's performance rows, from bench/report.py's <table>.dat:
# every pair's change 100*(B/A-1) as a point, exp(mean ln(B/A)) - 1 with
# its 95% Student t interval, and the A/A's beside it.  The y axis is fitted to
# the changes, not started at 0.
# gnuplot -e "dat='x.dat'; png='x.png'; title='...'" bench/plot.gp
set terminal pngcairo size 900,520 noenhanced
set output png
set title title
set ylabel "paired change B/A - 1 (%)"
set xzeroaxis lt -1
set xrange [-0.6:*]
set offsets 0, 0.6, 0.5, 0.5
set key outside bottom center horizontal
set grid ytics
plot dat index 0 using 1:3:xtic(2) with points pt 7 ps 0.8 lc rgb "#4477aa" title "each pair", \
     dat index 1 using ($1+0.12):3:4:5 with yerrorbars pt 5 ps 1.2 lw 2 lc rgb "#cc3311" title "exp(mean ln B/A) - 1, 95% t", \
     dat index 2 using 1:3:4:5 with yerrorbars pt 4 ps 1 lw 1 lc rgb "#777777" title "A/A, 95% t"
