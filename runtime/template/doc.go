// Package template renders Nomad's task templates (the template block)
// with Go's text/template and the function names that Nomad jobs use from
// consul-template: env, nomadVar, nomadVarList, nomadVarListSafe,
// nomadVarExists, and the usual string helpers (toLower, toUpper, split,
// join, replaceAll, trimSpace, toJSON, base64Encode, parseInt, ...).
//
// consul-template itself (MPL-2.0) was not taken as a library: its
// renderer is built around Consul and Vault clients and a runner with
// its own goroutines and timers, and it pulls both clients' modules in;
// troupe has neither, reads variables through its own servers, and wants
// each render to be one call it can run in a worker and test on its own.
// The functions keep consul-template's names and results (nomadVar gives
// items that print as their value, nomadVarList the variables' metadata),
// so a Nomad job's template renders the same.
//
// Render records what a template read (Deps): the alloc's template hook
// renders again when the variables table changes and applies the
// template's change_mode only when the output differs. A variable that
// nomadVar reads and that does not exist makes Render fail with
// ErrMissingVar, so that the first render waits for it, as Nomad's does.
package template
