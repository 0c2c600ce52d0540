package messages

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

func TestControllerResponseStatusCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp *ControllerResponse
		want codes.Code
	}{
		{"nil", nil, codes.OK},
		{"empty", &ControllerResponse{}, codes.OK},
		{"numeric", &ControllerResponse{GRPCCode: uint32(codes.NotFound)}, codes.NotFound},
		{"numeric wins over the name", &ControllerResponse{GRPCCode: uint32(codes.Internal), Code: "NotFound"}, codes.Internal},
		{"name only (an older sender)", &ControllerResponse{Code: "FailedPrecondition"}, codes.FailedPrecondition},
		{"name OK", &ControllerResponse{Code: "OK"}, codes.OK},
		{"unknown name", &ControllerResponse{Code: "SomethingNew"}, codes.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.resp.StatusCode())
		})
	}
}

// TestControllerResultRoundTrips: every code set survives the wire and
// keeps its name beside it.
func TestControllerResultRoundTrips(t *testing.T) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		t.Run(c.String(), func(t *testing.T) {
			r := ControllerResult(c, "m")
			b, err := proto.Marshal(r)
			require.NoError(t, err)
			var got ControllerResponse
			require.NoError(t, proto.Unmarshal(b, &got))
			require.Equal(t, c, got.StatusCode())
			require.Equal(t, "m", got.GetMessage())
			if c == codes.OK {
				require.Empty(t, got.GetCode())
			} else {
				require.Equal(t, c.String(), got.GetCode())
			}
		})
	}
}
