package messages

import "google.golang.org/grpc/codes"

// StatusCode is the controller RPC's gRPC code: GRPCCode when set, else
// the code that Code names (a sender that sets only the name: an older
// peer); OK when neither is set, Unknown for a name that is no gRPC code.
func (x *ControllerResponse) StatusCode() codes.Code {
	if c := x.GetGRPCCode(); c != 0 {
		return codes.Code(c)
	}
	name := x.GetCode()
	if name == "" {
		return codes.OK
	}
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if c.String() == name {
			return c
		}
	}
	return codes.Unknown
}

// SetStatusCode records the RPC's gRPC code c: GRPCCode, and its name in
// Code ("" for OK).
func (x *ControllerResponse) SetStatusCode(c codes.Code) {
	x.GRPCCode, x.Code = uint32(c), ""
	if c != codes.OK {
		x.Code = c.String()
	}
}

// ControllerResult is the response to a controller RPC that ended with
// gRPC code c and message.
func ControllerResult(c codes.Code, message string) *ControllerResponse {
	r := &ControllerResponse{Message: message}
	r.SetStatusCode(c)
	return r
}
