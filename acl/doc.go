// Package acl is Nomad's ACL policy language and the checks it compiles
// to. Parse reads a policy's rules (HCL: namespace "name-or-glob" {
// policy, capabilities, variables { path "..." { capabilities } } },
// node, agent, operator, plugin and quota { policy }, host_volume
// "name-or-glob" { policy, capabilities }); Compile merges policies into an
// ACL whose Allow* methods answer one question each.
//
// The semantics are Nomad's: a namespace (or variable path, or host
// volume) is looked up by exact name first, then by the glob rule closest
// to it (the one whose literal part is longest); capabilities of rules
// with the same name in several policies add up, and "deny" wins over
// anything; for node, agent, operator, plugin and quota the most
// permissive level wins unless one policy says "deny". A management ACL
// allows everything. The package is pure: no I/O, no clock.
package acl
