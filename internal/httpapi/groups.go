package httpapi

import (
	"encoding/json"
	"time"

	"github.com/queen-go/queen/internal/engine"
)

func (s *Server) handleGroups(q request) ([]engine.GroupQueue, error) {
	return s.eng.Groups().ConsumerGroups(q.Context())
}

func (s *Server) handleLagging(q request) ([]engine.LaggingPartition, error) {
	secs, err := queryInt(q.Request, "minLagSeconds", 3600, 0)
	if err != nil {
		return nil, err
	}
	return s.eng.Groups().LaggingPartitions(q.Context(), time.Duration(secs)*time.Second)
}

func (s *Server) handleGroup(q request) (engine.GroupDetails, error) {
	return s.eng.Groups().ConsumerGroup(q.Context(), q.PathValue("group"))
}

func (s *Server) handleGroupDelete(q request) (*engine.DeleteGroupResult, error) {
	meta, err := queryBool(q.Request, "deleteMetadata")
	if err != nil {
		return nil, err
	}
	return s.eng.Groups().DeleteConsumerGroup(q.Context(), q.PathValue("group"), q.PathValue("queue"), meta)
}

func (s *Server) handleSubscription(q request) (*engine.SubscriptionResult, error) {
	var body struct {
		SubscriptionTimestamp json.RawMessage `json:"subscriptionTimestamp"`
	}
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	var v string
	if err := readStrings(required(body.SubscriptionTimestamp, &v, "Missing subscriptionTimestamp in request body")); err != nil {
		return nil, err
	}
	ts, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, badRequest("subscriptionTimestamp must be an ISO-8601 timestamp")
	}
	return s.eng.Groups().UpdateSubscription(q.Context(), q.PathValue("group"), ts)
}

func (s *Server) handleSeek(q request) (*engine.SeekResult, error) {
	var body struct {
		ToEnd     *bool           `json:"toEnd"`
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	toEnd := body.ToEnd != nil && *body.ToEnd
	v, ok := optString(body.Timestamp)
	if !ok {
		return nil, badRequest("timestamp must be an ISO-8601 string")
	}
	var ts time.Time
	switch {
	case toEnd:
	case v == "start" || v == "beginning":
		ts = time.Unix(0, 0).UTC()
	case v != "":
		var err error
		if ts, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return nil, badRequest("timestamp must be an ISO-8601 string")
		}
	default:
		return nil, badRequest("Must specify either 'toEnd': true or 'timestamp'")
	}
	return s.eng.Groups().SeekQueue(q.Context(), q.PathValue("group"), q.PathValue("queue"), toEnd, ts)
}

func (s *Server) handleSeekPartition(q request) (*engine.PartitionSeekResult, error) {
	return s.eng.Groups().SeekPartition(q.Context(), q.PathValue("group"), q.PathValue("queue"), q.PathValue("partition"))
}
