// Package wheels turns a hash-pinned requirements file into verified wheel files: it parses the file (refusing
// anything that is not name==version with sha256 hashes), downloads from a PEP 503 simple index, checks every
// byte against the pinned hashes, and recomputes the hashes for the pinned versions (lock).
package wheels
