"""The `pullback` command line.

`command` parses the arguments and prints derivative code; `highlight` colours it.
"""
