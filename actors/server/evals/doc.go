// Package evals holds the rules that say which evaluations a change to the
// cluster creates: a job registered, deregistered, scaled or one of its
// allocations stopped; a node registered, its status changed or drained;
// a client's allocation updates; a plan the leader refused. They are the
// leader's rules (package server proposes most of them), kept in this
// leaf package so that the leader's other actors (actors/node,
// actors/scheduler) and the HTTP API use the same rules without
// importing the server actor.
//
// Every function is pure: it reads the state through a small view, takes
// the time as a value and returns the evaluations, pending, each with a
// fresh ID. Proposing them (in the same raft entry as the change, where
// there is one) is the caller's business.
package evals
