"""The `meeplelab` command line: the lazy front (`main`) and `play`."""
