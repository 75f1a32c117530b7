"""The front end: parse a live function, normalise it to A-normal form, inline small callees."""
