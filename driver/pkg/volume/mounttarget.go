package volume

// MountTargetChoice is one mount target a volume can be reached through: the zone keys it is known by (zone ID,
// zone name) and its IP address.
type MountTargetChoice struct {
	Zones []string
	IP    string
}

// PickMountTarget is the one rule for choosing a mount target, used by the controller (the az parameter, the
// root-directory cleanup mount) and by the node (mounttargetipmap): the first candidate in the first preferred zone
// that has one, else the first candidate. Candidates come in a stable order (sorted by zone), so the choice is
// the same every time. inPreferred says whether a preferred zone matched; ok is false when there is no candidate.
func PickMountTarget(candidates []MountTargetChoice, preferred ...string) (ip string, inPreferred, ok bool) {
	if len(candidates) == 0 {
		return "", false, false
	}
	for _, zone := range preferred {
		if zone == "" {
			continue
		}
		for _, c := range candidates {
			for _, z := range c.Zones {
				if z == zone {
					return c.IP, true, true
				}
			}
		}
	}
	return candidates[0].IP, false, true
}
