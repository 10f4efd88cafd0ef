"""The shape of the synthetic organisation: cast, roles, subsystems and workflows.

Everything here is static data plus pure functions of the seed, so the manifest of
an org is known before a single event is written. Workflows are chains of steps;
each step is an event type that writes (or touches) an artifact. Causal link specs
and silence pair specs are declared over step pairs and joined on the workflow's
key (``facts.incident_id`` ...), never on time alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

SUBSYSTEMS = ("slack", "jira", "confluence", "git", "email", "salesforce", "zendesk", "zoom", "datadog")

ROLES: dict[str, dict[str, Any]] = {
    "engineer": {"subsystems": ["slack", "jira", "confluence", "git", "datadog"]},
    "sre": {"subsystems": ["slack", "jira", "confluence", "git", "datadog", "zoom"]},
    "support": {"subsystems": ["slack", "zendesk", "jira", "confluence", "email"]},
    "sales": {"subsystems": ["slack", "salesforce", "email", "zoom"], "broadcast_event_types": ["ticket_escalated"]},
    "manager": {
        "subsystems": ["slack", "jira", "confluence", "email", "zoom", "salesforce"],
        "broadcast_event_types": ["incident_opened"],
    },
    "people_ops": {"subsystems": ["email", "confluence", "zoom", "slack"]},
    "product": {"subsystems": ["slack", "jira", "confluence", "zoom"]},
    "external": {
        "subsystems": [],
        "external": True,
        "description": "Customers and candidates: take part in events, read nothing.",
    },
}

# (role, how many) — 70 people plus 2 bots = 72 actors.
CAST = (
    ("engineer", 20),
    ("sre", 8),
    ("support", 10),
    ("sales", 10),
    ("manager", 6),
    ("people_ops", 3),
    ("product", 5),
    ("external", 8),
)
BOTS = (("datadog-bot", "sre"), ("zendesk-bot", "support"))

FIRST_NAMES = (
    "ada",
    "ben",
    "cleo",
    "dev",
    "eva",
    "finn",
    "gail",
    "hugo",
    "ines",
    "jay",
    "kira",
    "liam",
    "mona",
    "nils",
    "olga",
    "paul",
    "quin",
    "rosa",
    "sami",
    "tara",
    "uma",
    "vik",
    "wren",
    "xavi",
    "yuki",
    "zane",
    "abe",
    "bea",
    "cruz",
    "dina",
    "eli",
    "fay",
    "gus",
    "hana",
    "ivo",
    "jo",
    "kai",
    "lena",
    "milo",
    "nora",
    "otto",
    "pia",
    "reid",
    "sara",
    "theo",
    "una",
    "vera",
    "will",
    "yara",
    "zoe",
    "aria",
    "bo",
    "cal",
    "dora",
    "emil",
    "flo",
    "gia",
    "hal",
    "iris",
    "joel",
    "kate",
    "lou",
    "max",
    "nina",
    "omar",
    "pete",
    "rhea",
    "sven",
    "tess",
    "ugo",
)
CUSTOMERS = ("acme", "globex", "initech", "umbrella", "hooli", "vandelay", "soylent", "stark", "wayne", "tyrell")
SERVICES = (
    "checkout",
    "search",
    "auth",
    "billing",
    "ingest",
    "notifications",
    "reports",
    "gateway",
    "storage",
    "scheduler",
    "exports",
    "webhooks",
)


@dataclass(frozen=True)
class WStep:
    """One step of a workflow: an event type, who acts, and the artifact it writes."""

    key: str
    type: str
    role: str
    subsystem: str | None = None  # None: touches the artifact of ``touches``
    art: str | None = None  # artifact id prefix: id = f"{art}-{seq}"
    after: str | None = None
    hours: tuple[float, float] = (1.0, 4.0)
    drop: float = 0.0  # probability that this response never happens
    requires: tuple[str, ...] = ()
    touches: str | None = None
    external: bool = False
    bot: str | None = None
    restricted: str | None = None  # "actors" (participants only) or "roles:a,b"
    n_actors: int = 1
    refs: tuple[str, ...] = ()
    title: str = ""
    body: str = ""


@dataclass(frozen=True)
class Workflow:
    name: str
    key_field: str
    prefix: str
    weight: float
    steps: tuple[WStep, ...]
    causal: tuple[tuple[str, str, str, tuple[str, ...]], ...]  # (name, cause step, effect step, aliases)
    silence: tuple[tuple[str, str, str, str | None], ...]  # (name, trigger, response, query word or None)
    step_by_key: dict[str, WStep] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        self.step_by_key.update({s.key: s for s in self.steps})

    def max_offset_hours(self, key: str) -> float:
        """Latest possible time of a step after the workflow starts."""
        s = self.step_by_key[key]
        return 0.0 if s.after is None else self.max_offset_hours(s.after) + s.hours[1]

    def max_gap_days(self, cause: str, effect: str) -> float:
        """A gap that always contains the response: the longest path plus a margin, in whole days."""
        hours = self.max_offset_hours(effect) - self.min_offset_hours(cause)
        return float(math.ceil(hours / 24.0 + 0.5))

    def min_offset_hours(self, key: str) -> float:
        s = self.step_by_key[key]
        return 0.0 if s.after is None else self.min_offset_hours(s.after) + s.hours[0]


S = WStep
WORKFLOWS: tuple[Workflow, ...] = (
    Workflow(
        "incident",
        "incident_id",
        "INC-",
        0.10,
        (
            S(
                "alert",
                "alert_fired",
                "sre",
                "datadog",
                "ALERT",
                bot="datadog-bot",
                title="[datadog] {service} error rate above threshold",
                body="Monitor {service}-errors fired for {service}; p99 latency {p99} ms. Runbook in confluence.",
            ),
            S(
                "opened",
                "incident_opened",
                "sre",
                "jira",
                "JIRA",
                after="alert",
                hours=(0.1, 1.0),
                drop=0.25,
                refs=("alert",),
                title="{key}: {service} degraded",
                body="Opened from {ref_alert}. Impact: {customer} and others report failures in {service}. "
                "Incident commander {actor}.",
            ),
            S(
                "channel",
                "incident_channel_created",
                "engineer",
                "slack",
                "slack-inc",
                after="opened",
                hours=(0.05, 0.5),
                requires=("opened",),
                refs=("opened",),
                title="#inc-{seq} ({service})",
                body="{actor}: war room for {key}. Logs and graphs from {ref_alert}. Context from the on-call DM is "
                "private.",
            ),
            S(
                "mitigation",
                "mitigation_deployed",
                "engineer",
                "git",
                "HOTFIX",
                after="channel",
                hours=(0.5, 6.0),
                requires=("opened",),
                refs=("opened",),
                title="Hotfix for {key}: roll back {service} config",
                body="Rolls back the {service} config change behind {key}. Author {actor}.",
            ),
            S(
                "resolved",
                "incident_resolved",
                "sre",
                after="mitigation",
                hours=(0.5, 8.0),
                requires=("opened",),
                touches="opened",
                refs=("mitigation",),
            ),
            S(
                "postmortem",
                "postmortem_written",
                "sre",
                "confluence",
                "PM",
                after="resolved",
                hours=(12.0, 60.0),
                drop=0.2,
                requires=("opened",),
                refs=("opened",),
                title="Postmortem {key}: {service}",
                body="Timeline from {ref_alert} to resolution; hotfix {ref_mitigation}; war room {ref_channel}. "
                "Root cause: a config push to {service}. Author {actor}.",
            ),
            S(
                "review",
                "postmortem_reviewed",
                "manager",
                "zoom",
                "ZOOM-PMR",
                after="postmortem",
                hours=(12.0, 48.0),
                drop=0.2,
                requires=("postmortem",),
                refs=("postmortem",),
                n_actors=2,
                title="Transcript: review of {ref_postmortem}",
                body="{actors} reviewed {ref_postmortem} for {key}; agreed two action items.",
            ),
            S(
                "actions",
                "action_items_filed",
                "engineer",
                "jira",
                "AI",
                after="review",
                hours=(1.0, 24.0),
                drop=0.2,
                requires=("review",),
                refs=("review",),
                title="Action items from {ref_postmortem}",
                body="Follow-ups for {key}: add a canary for {service}; alert on config drift. Owner {actor}.",
            ),
        ),
        (
            ("alert_opens_incident", "alert", "opened", ("alerting", "paging")),
            ("incident_opens_channel", "opened", "channel", ("war room", "incident process")),
            ("channel_coordinates_mitigation", "channel", "mitigation", ("coordination", "swarming")),
            ("mitigation_resolves_incident", "mitigation", "resolved", ("rollback", "hotfix")),
            ("resolution_triggers_postmortem", "resolved", "postmortem", ("postmortem policy", "blameless review")),
            ("postmortem_triggers_review", "postmortem", "review", ("review policy", "governance")),
            ("review_files_action_items", "review", "actions", ("follow-up tracking", "action items")),
        ),
        (
            ("incident_after_alert", "alert", "opened", None),
            ("postmortem_after_resolution", "resolved", "postmortem", "postmortem"),
            ("review_after_postmortem", "postmortem", "review", "review"),
            ("actions_after_review", "review", "actions", None),
        ),
    ),
    Workflow(
        "escalation",
        "ticket_id",
        "ZD-",
        0.17,
        (
            S(
                "opened",
                "ticket_opened",
                "support",
                "zendesk",
                "TICKET",
                bot="zendesk-bot",
                external=True,
                title="{customer}: {service} not working",
                body="{customer} reports {service} failures since this morning. Assigned to {actor}.",
            ),
            S(
                "escalated",
                "ticket_escalated",
                "support",
                "jira",
                "ESC",
                after="opened",
                hours=(1.0, 12.0),
                drop=0.5,
                refs=("opened",),
                title="Escalation {key}: {customer} / {service}",
                body="Escalated from {ref_opened} by {actor}. Customer {customer} is at renewal risk.",
            ),
            S(
                "ack",
                "escalation_acknowledged",
                "engineer",
                "slack",
                "slack-esc",
                after="escalated",
                hours=(0.5, 4.0),
                drop=0.15,
                requires=("escalated",),
                refs=("escalated",),
                title="#escalations: {ref_escalated}",
                body="{actor}: picking up {ref_escalated}; looking at {service}.",
            ),
            S(
                "notified",
                "customer_notified",
                "support",
                "email",
                "MAIL",
                after="escalated",
                hours=(2.0, 24.0),
                drop=0.15,
                requires=("escalated",),
                external=True,
                refs=("opened",),
                title="Update on {key}",
                body="Dear {customer}, engineering is working on {service}. {actor}",
            ),
            S(
                "resolved",
                "ticket_resolved",
                "support",
                after="opened",
                hours=(30.0, 96.0),
                touches="opened",
                refs=("escalated",),
            ),
            S(
                "csat",
                "csat_sent",
                "support",
                "email",
                "CSAT",
                after="resolved",
                hours=(1.0, 24.0),
                drop=0.2,
                external=True,
                refs=("opened",),
                title="How did we do on {key}?",
                body="Hi {customer}, {key} is resolved. Please rate us.",
            ),
        ),
        (
            ("ticket_escalation", "opened", "escalated", ("severity routing", "escalation")),
            ("escalation_acknowledged_by_eng", "escalated", "ack", ("escalation pressure", "on-call")),
            ("escalation_notifies_customer", "escalated", "notified", ("customer communication", "sla")),
            ("resolution_triggers_csat", "resolved", "csat", ("survey automation", "csat policy")),
        ),
        (
            ("ack_after_escalation", "escalated", "ack", None),
            ("notice_after_escalation", "escalated", "notified", "update"),
            ("csat_after_resolution", "resolved", "csat", None),
        ),
    ),
    Workflow(
        "pull_request",
        "pr_id",
        "PR-",
        0.22,
        (
            S(
                "opened",
                "pr_opened",
                "engineer",
                "git",
                "GIT",
                title="{service}: {change}",
                body="{change} in {service}. Author {actor}.",
            ),
            S(
                "requested",
                "review_requested",
                "engineer",
                "slack",
                "slack-rev",
                after="opened",
                hours=(0.1, 2.0),
                refs=("opened",),
                title="#code-review: {ref_opened}",
                body="{actor}: review please: {ref_opened}",
            ),
            S(
                "reviewed",
                "pr_reviewed",
                "engineer",
                "git",
                "REV",
                after="requested",
                hours=(1.0, 24.0),
                drop=0.12,
                refs=("opened",),
                title="Review of {ref_opened}",
                body="{actor}: looks good, one nit on tests.",
            ),
            S(
                "merged",
                "pr_merged",
                "engineer",
                after="reviewed",
                hours=(0.5, 12.0),
                drop=0.12,
                requires=("reviewed",),
                touches="opened",
                refs=("reviewed",),
            ),
            S(
                "deployed",
                "deploy_completed",
                "sre",
                "datadog",
                "DEPLOY",
                after="merged",
                hours=(0.2, 6.0),
                drop=0.1,
                requires=("merged",),
                bot="datadog-bot",
                refs=("opened",),
                title="Deploy of {service} ({key})",
                body="Deployed {ref_opened} to production; error budget unchanged.",
            ),
        ),
        (
            ("pr_requests_review", "opened", "requested", ("review process", "code review")),
            ("request_draws_review", "requested", "reviewed", ("reviewer assignment", "review request")),
            ("review_enables_merge", "reviewed", "merged", ("approval", "branch protection")),
            ("merge_triggers_deploy", "merged", "deployed", ("continuous delivery", "ci/cd")),
        ),
        (
            ("review_after_request", "requested", "reviewed", None),
            ("merge_after_review", "reviewed", "merged", None),
            ("deploy_after_merge", "merged", "deployed", None),
        ),
    ),
    Workflow(
        "crm",
        "opportunity_id",
        "OPP-",
        0.12,
        (
            S(
                "created",
                "opportunity_created",
                "sales",
                "salesforce",
                "SFDC",
                title="{customer}: {service} expansion",
                body="Opportunity for {customer} ({service}), owner {actor}.",
            ),
            S(
                "call",
                "discovery_call_held",
                "sales",
                "zoom",
                "ZOOM-CALL",
                after="created",
                hours=(24.0, 96.0),
                external=True,
                refs=("created",),
                title="Transcript: discovery call with {customer}",
                body="{actor} and {customer} discussed {service} volumes and pricing for {ref_created}.",
            ),
            S(
                "followup",
                "followup_email_sent",
                "sales",
                "email",
                "FU",
                after="call",
                hours=(1.0, 48.0),
                drop=0.2,
                external=True,
                refs=("call",),
                title="Following up: {customer}",
                body="Hi {customer}, thanks for the call ({ref_call}). Next steps attached. {actor}",
            ),
            S(
                "updated",
                "crm_updated",
                "sales",
                "salesforce",
                "OPPLOG",
                after="call",
                hours=(2.0, 72.0),
                drop=0.2,
                refs=("created",),
                title="Activity log {ref_created}",
                body="Call logged; stage moved to evaluation.",
            ),
            S(
                "proposal",
                "proposal_sent",
                "sales",
                "email",
                "PROP",
                after="call",
                hours=(24.0, 120.0),
                drop=0.3,
                external=True,
                refs=("created",),
                title="Proposal for {customer}",
                body="Proposal for {service}, referencing {ref_created}. Discount approved by a manager in a DM.",
            ),
            S(
                "closed",
                "deal_closed",
                "sales",
                after="proposal",
                hours=(24.0, 120.0),
                drop=0.3,
                requires=("proposal",),
                touches="created",
                refs=("proposal",),
            ),
        ),
        (
            ("opportunity_books_call", "created", "call", ("prospecting", "discovery")),
            ("call_prompts_followup", "call", "followup", ("sales cadence", "follow-up")),
            ("call_leads_to_proposal", "call", "proposal", ("qualification", "buying intent")),
            ("proposal_closes_deal", "proposal", "closed", ("negotiation", "pricing")),
        ),
        (
            ("followup_after_call", "call", "followup", None),
            ("crm_after_call", "call", "updated", None),
            ("proposal_after_call", "call", "proposal", "proposal"),
        ),
    ),
    Workflow(
        "departure",
        "employee_id",
        "EMP-",
        0.012,
        (
            S(
                "resigned",
                "resignation_submitted",
                "people_ops",
                "email",
                "RESIGN",
                restricted="roles:people_ops,manager",
                title="Resignation {key}",
                body="Confidential: employee {key} resigned; notice period two weeks. Handled by {actor}.",
            ),
            S(
                "exit",
                "exit_interview_held",
                "people_ops",
                "zoom",
                "EXIT",
                after="resigned",
                hours=(24.0, 120.0),
                drop=0.2,
                restricted="actors",
                refs=("resigned",),
                title="Exit interview {key}",
                body="Confidential notes by {actor}: workload and on-call load were the main reasons.",
            ),
            S(
                "revoked",
                "access_revoked",
                "sre",
                "jira",
                "IT-REV",
                after="resigned",
                hours=(24.0, 160.0),
                drop=0.15,
                title="Revoke access for {key}",
                body="Remove {key} from SSO, VPN and on-call rotations. {actor}",
            ),
            S(
                "handover",
                "handover_doc_written",
                "engineer",
                "confluence",
                "HANDOVER",
                after="resigned",
                hours=(24.0, 120.0),
                drop=0.25,
                title="Handover notes {key}",
                body="Services owned by {key}: {service}. New owner {actor}.",
            ),
        ),
        (
            ("resignation_schedules_exit_interview", "resigned", "exit", ("offboarding", "hr process")),
            ("resignation_triggers_access_revocation", "resigned", "revoked", ("access control", "offboarding")),
            ("resignation_triggers_handover", "resigned", "handover", ("knowledge transfer", "handover")),
        ),
        (
            ("exit_interview_after_resignation", "resigned", "exit", "exit interview"),
            ("revocation_after_resignation", "resigned", "revoked", None),
            ("handover_after_resignation", "resigned", "handover", "handover"),
        ),
    ),
    Workflow(
        "onboarding",
        "hire_id",
        "HIRE-",
        0.012,
        (
            S(
                "offer",
                "offer_accepted",
                "people_ops",
                "email",
                "OFFER",
                restricted="roles:people_ops,manager",
                external=True,
                title="Offer accepted {key}",
                body="Confidential: candidate accepted the offer for {service} team; start in two weeks. {actor}",
            ),
            S(
                "provisioned",
                "accounts_provisioned",
                "sre",
                "jira",
                "IT-PROV",
                after="offer",
                hours=(24.0, 96.0),
                drop=0.15,
                title="Provision accounts for {key}",
                body="SSO, git and datadog for {key}. {actor}",
            ),
            S(
                "buddy",
                "buddy_assigned",
                "manager",
                "slack",
                "slack-buddy",
                after="offer",
                hours=(24.0, 72.0),
                drop=0.2,
                title="Buddy for {key}",
                body="{actor}: buddy for {key} on the {service} team is assigned.",
            ),
            S(
                "doc",
                "onboarding_doc_completed",
                "people_ops",
                "confluence",
                "ONB",
                after="provisioned",
                hours=(24.0, 96.0),
                drop=0.2,
                requires=("provisioned",),
                refs=("provisioned",),
                title="Onboarding checklist {key}",
                body="Accounts ({ref_provisioned}) done; first week plan. {actor}",
            ),
        ),
        (
            ("offer_triggers_provisioning", "offer", "provisioned", ("it onboarding", "provisioning")),
            ("offer_triggers_buddy", "offer", "buddy", ("buddy program", "onboarding")),
            ("provisioning_enables_checklist", "provisioned", "doc", ("onboarding checklist", "readiness")),
        ),
        (
            ("provisioning_after_offer", "offer", "provisioned", None),
            ("buddy_after_offer", "offer", "buddy", None),
            ("checklist_after_provisioning", "provisioned", "doc", "onboarding"),
        ),
    ),
)

# Single-event chatter: DMs (restricted), meetings and page edits; weight shared with the workflows.
CHATTER_WEIGHT = 0.366
CHATTER = (
    ("dm_sent", "slack", "dm", 0.5),
    ("meeting_held", "zoom", "ZOOM-MTG", 0.2),
    ("doc_edited", "confluence", "DOC", 0.3),
)


def actor_windows(days: int) -> dict[str, list[dict[str, Any]]]:
    """Role windows per actor: four hires (``since``), four departures (``until``), two role changes."""
    names = iter(FIRST_NAMES)
    cast: dict[str, list[dict[str, Any]]] = {}
    counters: dict[str, int] = {}
    for role, n in CAST:
        for _ in range(n):
            counters[role] = counters.get(role, 0) + 1
            name = f"cust-{counters[role]:02d}" if role == "external" else next(names)
            cast[name] = [{"role": role}]
    engineers = [a for a, w in cast.items() if w[0]["role"] == "engineer"]
    support = [a for a, w in cast.items() if w[0]["role"] == "support"]

    def day(frac: float) -> int:
        return max(1, int(days * frac))

    for i, a in enumerate(engineers[-4:]):
        cast[a] = [{"role": "engineer", "since": day(0.15 + 0.17 * i)}]
    for i, a in enumerate(engineers[:4]):
        cast[a] = [{"role": "engineer", "until": day(0.25 + 0.17 * i)}]
    promoted = support[0]
    cast[promoted] = [{"role": "support", "until": day(0.5)}, {"role": "manager", "since": day(0.5)}]
    moved = engineers[4]
    cast[moved] = [{"role": "engineer", "until": day(0.4)}, {"role": "sre", "since": day(0.4)}]
    for bot, role in BOTS:
        cast[bot] = [{"role": role}]
    return cast


def perspective_actors(cast: dict[str, list[dict[str, Any]]]) -> list[str]:
    """A mix of stable, hired, departed and moved people, plus one of each other role."""
    windowed = [a for a, w in cast.items() if len(w) > 1 or "since" in w[0] or "until" in w[0]]
    by_role: dict[str, str] = {}
    for a, w in cast.items():
        role = w[0]["role"]
        if (
            role != "external"
            and not a.endswith("-bot")
            and len(w) == 1
            and "since" not in w[0]
            and "until" not in w[0]
        ):
            by_role.setdefault(role, a)
    return sorted(set(windowed) | set(by_role.values()))
