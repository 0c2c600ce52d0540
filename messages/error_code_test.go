package messages

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		code ErrorCode
		wire string
	}{
		{CodeNotLeader, "not_leader"},
		{CodeNotFound, "not_found"},
		{CodeInvalid, "invalid"},
		{CodeUnavailable, "unavailable"},
		{CodeInternal, "internal"},
		{CodeConflict, "conflict"},
	} {
		t.Run(tc.wire, func(t *testing.T) {
			e := NewError(tc.code, "m")
			require.Equal(t, tc.wire, e.GetCode(), "the wire spelling")
			require.Equal(t, tc.code, e.ErrorCode())
			require.Equal(t, tc.code, (&Error{Code: tc.wire}).ErrorCode())
			b, err := json.Marshal(e)
			require.NoError(t, err)
			require.JSONEq(t, `{"Code":"`+tc.wire+`","Message":"m"}`, string(b))
		})
	}
	e := Errorf(CodeNotFound, "volume %q not found", "v1")
	require.Equal(t, `volume "v1" not found`, e.GetMessage())
	var nilErr *Error
	require.Equal(t, ErrorCode(""), nilErr.ErrorCode())
}
