package driver

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSignal(t *testing.T) {
	tests := []struct {
		in   string
		want syscall.Signal
		err  bool
	}{
		{in: "SIGTERM", want: syscall.SIGTERM},
		{in: "TERM", want: syscall.SIGTERM},
		{in: "sigint", want: syscall.SIGINT},
		{in: " SIGHUP ", want: syscall.SIGHUP},
		{in: "kill", want: syscall.SIGKILL},
		{in: "USR1", want: syscall.SIGUSR1},
		{in: "9", want: syscall.SIGKILL},
		{in: "", err: true},
		{in: "SIGNOPE", err: true},
		{in: "0", err: true},
		{in: "-9", err: true},
		{in: "99", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSignal(tt.in)
			if tt.err {
				require.ErrorIs(t, err, ErrUnknownSignal)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestStopSignal(t *testing.T) {
	got, err := StopSignal("")
	require.NoError(t, err)
	require.Equal(t, syscall.SIGTERM, got)
	got, err = StopSignal("SIGINT")
	require.NoError(t, err)
	require.Equal(t, syscall.SIGINT, got)
	_, err = StopSignal("bogus")
	require.ErrorIs(t, err, ErrUnknownSignal)
}

func TestExitResultSuccessful(t *testing.T) {
	tests := []struct {
		name string
		r    ExitResult
		want bool
	}{
		{name: "zero", r: ExitResult{}, want: true},
		{name: "code", r: ExitResult{ExitCode: 1}},
		{name: "signal", r: ExitResult{ExitCode: 137, Signal: 9}},
		{name: "oom", r: ExitResult{OOMKilled: true}},
		{name: "err", r: ExitResult{Err: ErrTaskNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.r.Successful())
		})
	}
}
