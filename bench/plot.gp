# SPDX-License-Identifier: GPL-2.0
# gnuplot -e "dat='x.dat'; png='x.png'; title='...'" bench/plot.gp
# Throughput of each workload relative to the base side, with stddev bars.
set terminal pngcairo size 800,480 noenhanced
set output png
set title title
set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set ylabel "throughput, % of base (mean, error bar = stddev)"
set yrange [0:*]
set grid ytics
set key top left
set xtics rotate by -20
plot dat using 2:3:xtic(1) title columnhead(2), \
     '' using 4:5 title columnhead(4)
