"""The EC2 instance metadata service: IMDSv2 with a token, falling back to IMDSv1."""

import json
import logging
from typing import Any, Dict, Optional

from . import linklocal

TOKEN_PATH = "/latest/api/token"
IDENTITY_PATH = "/latest/dynamic/instance-identity/document"
AZ_ID_PATH = "/latest/meta-data/placement/availability-zone-id"
TOKEN_TTL = "21600"

log = logging.getLogger(__name__)


class IMDS:
    """IMDS reads instance metadata from endpoint; results are cached for the process."""

    def __init__(self, endpoint: str, disable_token: bool = False, token_timeout: float = 0.05,
                 timeout: float = 1.0):
        self.endpoint = endpoint.rstrip("/")
        self.disable_token = disable_token
        self.token_timeout = token_timeout
        self.timeout = timeout
        self._token = None  # type: Optional[str]
        self._token_tried = False
        self._cache = {}  # type: Dict[str, Optional[str]]

    def _fetch_token(self) -> Optional[str]:
        if self.disable_token or self._token_tried:
            return self._token
        self._token_tried = True
        try:
            self._token = linklocal.request(self.endpoint + TOKEN_PATH, method="PUT",
                                            headers={"X-aws-ec2-metadata-token-ttl-seconds": TOKEN_TTL},
                                            timeout=self.token_timeout).decode("utf-8")
        except OSError as e:  # urllib's URLError is an OSError too
            log.debug("IMDSv2 token unavailable (%s); using IMDSv1", e)
        return self._token

    def get(self, path: str) -> Optional[str]:
        """get returns the body at path, or None when IMDS cannot be reached or has no such path."""
        if path in self._cache:
            return self._cache[path]
        token = self._fetch_token()
        headers = {"X-aws-ec2-metadata-token": token} if token else {}
        value = None
        try:
            value = linklocal.request(self.endpoint + path, headers=headers, timeout=self.timeout).decode("utf-8")
        except OSError as e:
            log.debug("instance metadata %s unavailable: %s", path, e)
        self._cache[path] = value
        return value

    def identity_document(self) -> Dict[str, Any]:
        """identity_document is the parsed instance identity document, {} when unavailable."""
        body = self.get(IDENTITY_PATH)
        if not body:
            return {}
        try:
            doc = json.loads(body)
        except ValueError:
            log.warning("instance identity document is not JSON")
            return {}
        return doc if isinstance(doc, dict) else {}

    def region(self) -> Optional[str]:
        return self.identity_document().get("region")

    def availability_zone(self) -> Optional[str]:
        return self.identity_document().get("availabilityZone")

    def availability_zone_id(self) -> Optional[str]:
        value = self.get(AZ_ID_PATH)
        return value.strip() if value else None
