// Package meshhub is the hub side of hostlink's mesh (package mesh): the
// identities it issues and the NATS server it can embed.
//
// Identities are NATS decentralized JWTs. The hub holds an operator key
// and one account key (plus the system account's); every machine and
// every caller is a user of that account, known by its public NKey, whose
// seed stays where it was made. A machine's user may subscribe to its own
// operation subjects and the service discovery subjects only, and publish
// only replies, its own audit export and its own approval notices; a
// caller's may publish requests to the machines its credentials name (or
// all) and read discovery and approval notices. No credential lets anyone
// decide an approval: the executors serve no such operation.
//
// The embedded server (Node) runs JetStream with the account resolver in
// memory, alone on loopback by default, or as one node of a cluster, or
// as a leaf node of another hub; executors and gateways connect to any of
// them, or to an existing NATS deployment trusting the same operator,
// with the same code.
package meshhub
