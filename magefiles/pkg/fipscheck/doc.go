// Package fipscheck states, as code, the rules openshift/check-payload applies to each executable of an image that
// claims FIPS compliance, so that the build can refuse a binary the scan would reject long before any image exists.
// The operator's CSV says features.operators.openshift.io/fips-compliant: "true", which makes every related image
// subject to that scan.
//
// The rules are those of openshift/check-payload@6a49677b388b562ffadcc385949baba611ecc546:
// internal/validations/validations.go (ScanBinary, isElfExe, isStatic, isGoExecutable and the "go" and "exe"
// validation lists), internal/golang/elf.go (IsPie), internal/golang/goscan.go (ReadTable, ExpectedSyms),
// internal/types/errors.go (the error names used as Rule here) and config.toml (fips_certified_modules: the Go
// module entry whose certified_artifact_min_version is v1.0.0). As facts:
//
//   - Only ELF executables are scanned: ET_EXEC, or ET_DYN with DF_1_PIE in DT_FLAGS_1 (a shared library is
//     skipped). An executable is static when it has no PT_INTERP program header.
//   - A file is a Go binary when debug/buildinfo reads it. Other executables fail only when static
//     (ErrNotDynLinked).
//   - The Go symbol table comes from the pclntab (.gopclntab); a binary none of whose function names contains
//     "crypto" uses no crypto, and of the rules below only the tag rule applies to it.
//   - Go's native FIPS 140 module (Go 1.26 and newer): when a DefaultGODEBUG (or GODEBUG) build setting holds
//     fips140=auto, on or only, the binary must have a GOFIPS140 build setting that is neither empty nor "off" and
//     whose leading vX.Y.Z is at least v1.0.0 (so "latest" fails: ErrGoFIPSNotCertified). Such a binary passes:
//     none of the OpenSSL rules apply. In Go 1.26 a binary without that GODEBUG falls through to the OpenSSL rules;
//     from Go 1.27 it fails (ErrGoFIPSNotEnabled).
//   - The OpenSSL rules (Red Hat's golang-fips toolchain), in order: the CGO_ENABLED build setting is "1"
//     (ErrGoNotCgoEnabled); the file contains the bytes "cgo_init" or "_cgo_topofstack" (ErrGoNoCgoInit); from Go
//     1.22 the function vendor/github.com/golang-fips/openssl/v2.dlopen exists (ErrGoMissingSymbols); the
//     executable is dynamic (ErrNotDynLinked). The image must then also carry a FIPS OpenSSL provider (an
//     image-level check, not modelled here).
//   - Tags, for every Go binary except native FIPS ones: a failure is reported only when a GOEXPERIMENT build
//     setting exists and lacks strictfipsruntime (ErrGoNotGoExperiment); what is reported then is the tag verdict:
//     no -tags setting (ErrGoNoTags, a warning), the tag no_openssl (ErrGoInvalidTag, an error), or no
//     strictfipsruntime tag (ErrGoMissingTag, a warning).
//   - The rules run in that order and the scan reports the first one that fails, warning or error. Warnings fail
//     the scan under check-payload's --fail-on-warnings.
//
// check-payload's exceptions (ignore lists per payload component, tag, RPM or path in its config files) name
// OpenShift's own images; none applies to this project's images, so none is modelled. Binaries older than Go 1.22
// are refused with an error: their symbol rules differ and this project builds with Go 1.26.
package fipscheck
