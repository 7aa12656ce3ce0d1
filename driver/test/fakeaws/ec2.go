package fakeaws

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
)

type describeAZResponse struct {
	XMLName   xml.Name `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeAvailabilityZonesResponse"`
	RequestID string   `xml:"requestId"`
	Zones     []azItem `xml:"availabilityZoneInfo>item"`
}

func (d *describeAZResponse) setRequestID(id string) { d.RequestID = id }

type azItem struct {
	ZoneName           string `xml:"zoneName"`
	ZoneState          string `xml:"zoneState"`
	RegionName         string `xml:"regionName"`
	ZoneID             string `xml:"zoneId"`
	ZoneType           string `xml:"zoneType"`
	OptInStatus        string `xml:"optInStatus"`
	GroupName          string `xml:"groupName"`
	NetworkBorderGroup string `xml:"networkBorderGroup"`
	Messages           string `xml:"messageSet"`
}

// describeAvailabilityZones: EC2 DescribeAvailabilityZones with ZoneName.N, ZoneId.N and Filter.N.Name /
// Filter.N.Value.M (zone-name, zone-id, region-name, state, zone-type, group-name, opt-in-status).
func (s *Server) describeAvailabilityZones(r *http.Request) (any, *apiError) {
	names := indexedValues(r, "ZoneName")
	ids := indexedValues(r, "ZoneId")
	for _, n := range names {
		if _, _, ok := s.zoneByName(n); !ok {
			return nil, newError(http.StatusBadRequest, "InvalidParameterValue",
				"Invalid availability zone: [%s]", n)
		}
	}
	for _, id := range ids {
		if _, _, ok := s.zoneByID(id); !ok {
			return nil, newError(http.StatusBadRequest, "InvalidParameterValue",
				"Invalid availability zone ID: [%s]", id)
		}
	}
	filters, e := parseEC2Filters(r)
	if e != nil {
		return nil, e
	}
	out := &describeAZResponse{}
	for _, z := range s.opts.Zones {
		item := azItem{
			ZoneName: z.Name, ZoneState: "available", RegionName: s.opts.Region, ZoneID: z.ID,
			ZoneType: "availability-zone", OptInStatus: "opt-in-not-required", GroupName: s.opts.Region,
			NetworkBorderGroup: s.opts.Region,
		}
		if len(names) > 0 && !slices.Contains(names, z.Name) && !slices.Contains(ids, z.ID) ||
			len(names) == 0 && len(ids) > 0 && !slices.Contains(ids, z.ID) {
			continue
		}
		if filters.match(item) {
			out.Zones = append(out.Zones, item)
		}
	}
	return out, nil
}

// ec2Filters maps a filter name to its accepted values (any of them matches).
type ec2Filters map[string][]string

func parseEC2Filters(r *http.Request) (ec2Filters, *apiError) {
	f := ec2Filters{}
	for i := 1; ; i++ {
		name := r.Form.Get(fmt.Sprintf("Filter.%d.Name", i))
		if name == "" {
			if i > 1 || r.Form.Get("Filter.1.Value.1") == "" {
				return f, nil
			}
			return nil, newError(http.StatusBadRequest, "InvalidParameterValue", "Filter.1.Name is required")
		}
		switch name {
		case "zone-name", "zone-id", "region-name", "state", "zone-type", "group-name", "opt-in-status":
		default:
			return nil, newError(http.StatusBadRequest, "InvalidParameterValue",
				"The filter '%s' is invalid; want zone-name, zone-id, region-name, state, zone-type, "+
					"group-name or opt-in-status", name)
		}
		f[name] = append(f[name], indexedValues(r, fmt.Sprintf("Filter.%d.Value", i))...)
	}
}

func (f ec2Filters) match(z azItem) bool {
	fields := map[string]string{
		"zone-name": z.ZoneName, "zone-id": z.ZoneID, "region-name": z.RegionName, "state": z.ZoneState,
		"zone-type": z.ZoneType, "group-name": z.GroupName, "opt-in-status": z.OptInStatus,
	}
	for name, values := range f {
		if !slices.ContainsFunc(values, func(v string) bool { return wildcardMatch(v, fields[name]) }) {
			return false
		}
	}
	return true
}

// wildcardMatch matches EC2 filter values, where * matches any run of characters and ? one character. It
// backtracks only to the last *, so it is linear in practice and never exponential.
func wildcardMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// indexedValues returns prefix.1, prefix.2, … until the first missing index.
func indexedValues(r *http.Request, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := r.Form[fmt.Sprintf("%s.%d", prefix, i)]
		if !ok || len(v) == 0 {
			return out
		}
		out = append(out, v[0])
	}
}
