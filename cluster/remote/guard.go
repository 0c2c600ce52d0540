package remote

import (
	"context"
	"crypto/x509"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	paremote "github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/troupe-dev/troupe/messages"
)

// TokenHeader is the message header that carries a user's ACL token
// secret (WithToken sets it on a Request).
const TokenHeader = "x-nomad-token"

// Inbound is one message that arrived over the transport, as a Guard
// sees it before any actor does.
type Inbound struct {
	// Role is the role the sender's TLS certificate names ("server",
	// "client", "cli"); "" on a plain transport, or for a certificate
	// that names none, where peers are not identified.
	Role string
	// Region is the region the sender's certificate names with its role
	// ("eu" of "server.eu.nomad"); "" when Role is.
	Region string
	// Target is the name of the local actor the message goes to (replies
	// go to futures, "future$...").
	Target string
	// Type is the message's full protobuf name ("troupe.ApplyRequest").
	Type string
	// Token is the ACL token secret the message carries ("": none).
	Token string
}

// IsReply reports whether the message answers a request of this agent
// (it goes to one of its futures).
func (in Inbound) IsReply() bool { return strings.HasPrefix(in.Target, "future$") }

// Guard decides whether an inbound message may be delivered. A refusal
// (non-nil error) drops it; a request is answered with a
// permission_denied *messages.Error naming the refusal.
// ctx is the peer's stream's: it ends when the peer goes away.
type Guard func(ctx context.Context, in Inbound) error

// guardInterceptor checks every envelope of every batch a peer streams
// in, before protoactor's endpoint reader delivers it.
func (t *Transport) guardInterceptor(g Guard) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		role, region := peerRole(ss.Context())
		return handler(srv, &guardedStream{ServerStream: ss, t: t, g: g, role: role, region: region})
	}
}

type guardedStream struct {
	grpc.ServerStream
	t      *Transport
	g      Guard
	role   string
	region string
}

func (s *guardedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if rm, ok := m.(*paremote.RemoteMessage); ok {
		if b := rm.GetMessageBatch(); b != nil {
			s.filter(b)
		}
	}
	return nil
}

// filter drops the envelopes the guard refuses, answering their senders.
func (s *guardedStream) filter(b *paremote.MessageBatch) {
	kept := b.Envelopes[:0]
	for _, env := range b.Envelopes {
		in := Inbound{Role: s.role, Region: s.region}
		if int(env.TypeId) < len(b.TypeNames) {
			in.Type = b.TypeNames[env.TypeId]
		}
		if i := int(env.Target); i >= 0 && i < len(b.Targets) {
			in.Target = b.Targets[i].GetId()
		}
		if h := env.GetMessageHeader(); h != nil {
			in.Token = h.GetHeaderData()[TokenHeader]
		}
		err := s.g(s.Context(), in)
		if err == nil {
			kept = append(kept, env)
			continue
		}
		s.t.log.Warn("remote: message refused", "type", in.Type, "target", in.Target, "role", in.Role, "region", in.Region, "error", err)
		if sender := senderOf(env, b.Senders); sender != nil {
			s.t.sys.Root.Send(sender, messages.NewError(messages.CodePermissionDenied, err.Error()))
		}
	}
	b.Envelopes = kept
}

func senderOf(env *paremote.MessageEnvelope, senders []*actor.PID) *actor.PID {
	i := int(env.Sender) - 1
	if env.Sender == 0 || i >= len(senders) {
		return nil
	}
	return &actor.PID{Address: senders[i].GetAddress(), Id: senders[i].GetId(), RequestId: env.SenderRequestId}
}

// peerRole is the role and region the peer's TLS certificate names: the
// first two labels of a "<role>.<region>.nomad" name ("server" wins when
// several); "" for a plain connection.
func peerRole(ctx context.Context) (role, region string) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "", ""
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.PeerCertificates) == 0 {
		return "", ""
	}
	return certRole(info.State.PeerCertificates[0])
}

func certRole(c *x509.Certificate) (role, region string) {
	for _, n := range c.DNSNames { // a certificate that names no role leaves the peer unidentified
		parts := strings.Split(n, ".")
		if len(parts) < 3 {
			continue
		}
		switch parts[0] {
		case "server":
			return "server", parts[1]
		case "client", "cli":
			if role == "" {
				role, region = parts[0], parts[1]
			}
		}
	}
	return role, region
}

type tokenKey struct{}

// WithToken makes the Requests made with ctx carry the ACL token secret
// (in TokenHeader), for the receiving agent to check.
func WithToken(ctx context.Context, secret string) context.Context {
	return context.WithValue(ctx, tokenKey{}, secret)
}

func tokenOf(ctx context.Context) string {
	s, _ := ctx.Value(tokenKey{}).(string)
	return s
}
