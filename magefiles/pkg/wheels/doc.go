// Package wheels turns a hash-pinned requirements file into verified distribution files (pure-Python wheels, or
// the sdist when that is what is pinned, as for botocore): it parses the file (refusing anything that is not
// name==version with sha256 hashes), reads PEP 691 (JSON) or PEP 503 (HTML) simple index pages with a client that
// times out, checks every byte against the pinned hashes, and recomputes the hashes for the pinned versions
// (lock). pybuild turns a verified sdist into a wheel.
package wheels
