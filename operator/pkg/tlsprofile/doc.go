// Package tlsprofile makes the operator's own HTTPS endpoint (metrics and health, served by library-go's
// controllercmd) follow the cluster's TLS security profile, as library-go based OpenShift operators do: before the
// command starts it reads APIServer/cluster, resolves the profile (the cluster's when spec.tlsAdherence asks all
// components to honour it, else the default Intermediate profile; never Go's own defaults) and hands controllercmd a
// GenericOperatorConfig with servingInfo.minTLSVersion and cipherSuites merged into the configuration it was given.
// A later change of the resolved profile ends the process, so that it restarts with the new one.
package tlsprofile
