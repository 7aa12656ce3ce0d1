// Package fakeaws is a faithful fake of the AWS APIs the project calls (EFS REST-JSON, EC2 and STS query
// protocols, and the EC2 instance metadata service), served over real HTTP so that unmodified aws-sdk-go-v2 and
// botocore clients work against it with only an endpoint override; it adds fault injection, call counters and
// seeding for tests and benchmarks.
package fakeaws
