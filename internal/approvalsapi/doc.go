// Package approvalsapi holds the approval broker's records, types only:
// an approval and the exact action it covers, its states, the scopes a
// decision can reach and the grants they make, a proposal awaiting a
// person's confirmation and a batch decision's outcome. The control
// channel's readers (the CLI's `hostlink approvals`), the operation core
// and the transports use these without importing the broker, which lives
// in internal/approvals and names the same types. It is a leaf (see
// TestTypesPackagesAreLeaves).
package approvalsapi
