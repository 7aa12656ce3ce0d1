// Package wheels drives pip for the Python distributions an image installs: it refuses a requirements file that is
// not strictly name==version with sha256 hashes, then lets pip download and verify the pinned files from a PEP 503
// index (pip download --require-hashes), build wheels offline from them (pip wheel --no-index --no-build-isolation),
// install those into a directory for an image layer (pip install --target), and recompute the pins (lock). Go keeps
// the orchestration: which pip, a clean environment, caching, and the checks pip does not make (pure-Python wheels
// only, no console scripts whose shebang would name the build host's interpreter).
package wheels
