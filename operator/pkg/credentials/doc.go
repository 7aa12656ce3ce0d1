// Package credentials keeps one CredentialsRequest of the driver in place: it decides from the cloud-credential
// operator's mode and the role ARN read at start-up whether the request is wanted, turns it into STS form when a
// role ARN is given, applies it and reports whether the cloud-credential operator has provisioned its Secret.
package credentials
