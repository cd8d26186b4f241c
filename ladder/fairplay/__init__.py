"""Fair play: collusion found in the play (issue 33). `detect` is the pure test; the app keeps
each pair of bots' running test from the flows of their shared rated matches, flags pairs for
staff, and voids a flagged pair's shared matches."""
