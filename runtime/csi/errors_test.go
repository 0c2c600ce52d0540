package csi

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestClassification(t *testing.T) {
	cases := []struct {
		code                             codes.Code
		notFound, unavailable, retryable bool
	}{
		{codes.Canceled, false, false, true},
		{codes.Unknown, false, false, true},
		{codes.InvalidArgument, false, false, false},
		{codes.DeadlineExceeded, false, false, true},
		{codes.NotFound, true, false, false},
		{codes.AlreadyExists, false, false, false},
		{codes.PermissionDenied, false, false, false},
		{codes.ResourceExhausted, false, false, true},
		{codes.FailedPrecondition, false, false, false},
		{codes.Aborted, false, false, true},
		{codes.OutOfRange, false, false, false},
		{codes.Unimplemented, false, false, false},
		{codes.Internal, false, false, true},
		{codes.Unavailable, false, true, true},
		{codes.DataLoss, false, false, false},
		{codes.Unauthenticated, false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			for _, err := range []error{
				status.Error(tc.code, "plugin says no"),
				wrap("NodeUnpublishVolume", "vol1", status.Error(tc.code, "plugin says no")),
				fmt.Errorf("outer: %w", wrap("Probe", "", status.Error(tc.code, "x"))),
			} {
				require.Equal(t, tc.code, Code(err), err.Error())
				require.Equal(t, tc.notFound, IsNotFound(err), err.Error())
				require.Equal(t, tc.unavailable, IsUnavailable(err), err.Error())
				require.Equal(t, tc.retryable, IsRetryable(err), err.Error())
			}
			require.Equal(t, tc.retryable, IsRetryableCode(tc.code), "the code alone")
		})
	}
	require.False(t, IsRetryableCode(codes.OK))
}

func TestClassificationOfLocalErrors(t *testing.T) {
	cases := []struct {
		name                  string
		err                   error
		code                  codes.Code
		unavailable, retrying bool
	}{
		{"nil", nil, codes.OK, false, false},
		{"dial", fmt.Errorf("%w: refused", ErrDial), codes.Unavailable, true, true},
		{"closed", ErrClosed, codes.Unavailable, true, true},
		{"invalid request", fmt.Errorf("%w: no volume", ErrInvalidRequest), codes.InvalidArgument, false, false},
		{"access mode", fmt.Errorf("%w \"x\"", ErrUnknownAccessMode), codes.InvalidArgument, false, false},
		{"attachment mode", ErrUnknownAttachmentMode, codes.InvalidArgument, false, false},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, false, true},
		{"canceled", context.Canceled, codes.Canceled, false, true},
		{"plain", errors.New("boom"), codes.Unknown, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.code, Code(tc.err))
			require.Equal(t, tc.unavailable, IsUnavailable(tc.err))
			require.Equal(t, tc.retrying, IsRetryable(tc.err))
			require.False(t, IsNotFound(tc.err))
		})
	}
}
