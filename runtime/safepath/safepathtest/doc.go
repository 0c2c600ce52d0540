// Package safepathtest helps tests show that code touched nothing
// outside where it may write: Tree records a directory (every entry's
// mode, size and link target) to compare before and after.
package safepathtest
