"""The ``paper`` style: a synthetic organisation with the awkward shapes of real exports.

Same cast, roles, subsystems, access policy, scale knobs and spec counts as the
default style (25 causal link specs, 19 silence pair specs), written by the same
writer in the same formats; what differs is the shape of the records:

* **bookkeeping-only facts**: ``{"flow": "incident", "step": 2}`` — identical across
  every instance of a workflow — sometimes with a list-valued ``tags`` fact, and
  bots' and chatter events carry no ``facts`` at all;
* **identity only in ``artifact_ids``**, keyed by subsystem: ``{"jira": "JIRA-0042"}``
  or lists ``{"datadog": ["DD-0007", "DD-0008"]}``. Causal link and silence joins are
  on ``artifact_ids.<subsystem>``: the record an instance shares (the ticket, the pull
  request, the opportunity, the HR email) is referenced by its later events;
* an event that writes a document references it, created **at the event's own
  timestamp** (the document records the event); other events only reference earlier
  documents (``incident_resolved`` points at the ticket opened hours before);
* **dense, same-minute events**: timestamps have minute resolution, people work
  08:00-18:00, alerts fire in storms (several at one minute), Slack threads;
  multi-actor events (2-4 people), bots;
* **templates without placeholders** (``the alert had not fired``) and silence
  search spaces as selector mappings (``{subsystem, id_template: "{artifact_ids.jira}"}``).

Within a block, events are written in time order (an export, not grouped by
instance), so instances interleave and the next effect-type event after a cause is
often another instance's: distractors occur naturally, as do absences (responses
are dropped with some probability) and presences.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .engine import Style, _below, _Cast, _Sink, cumulative, drive, iso_writer, pick_cumulative
from .shape import CUSTOMERS, SERVICES

# Artifact id prefix per subsystem: ids say where a document lives, not which workflow it belongs to.
PREFIX = {
    "slack": "SL",
    "jira": "JIRA",
    "confluence": "CONF",
    "git": "GH",
    "email": "MSG",
    "salesforce": "SF",
    "zendesk": "ZD",
    "zoom": "ZM",
    "datadog": "DD",
}
# Exports disagree on what the creation time is called (all three are read by the loader).
TIME_FIELD = {"jira": "created_at", "email": "date"}
_CHANGES = (
    "retry with backoff",
    "cache warm-up",
    "pagination",
    "timeouts",
    "feature flag cleanup",
    "schema migration",
    "logging",
    "dependency bump",
)
BURST_GAPS = (0, 0, 0, 60, 60, 120)  # seconds between events of a burst: often the same minute
WORK_START_H, WORK_HOURS = 8.0, 10.0
_MINUTE = 60.0


@dataclass(frozen=True)
class PStep:
    """One step of a paper workflow: an event type, its crew, and the document it writes (if any)."""

    key: str
    type: str
    crew: tuple[tuple[str, int, int], ...]  # (role, min, max) people per role; "external" for outsiders
    doc: str | None = None  # subsystem of the document written at the event's timestamp; None: writes nothing
    after: str | None = None
    hours: tuple[float, float] = (1.0, 4.0)
    drop: float = 0.0  # probability that the step never happens
    requires: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()  # earlier steps whose documents the event references
    bot: str | None = None
    restricted: str | None = None  # "actors" (participants only) or "roles:a,b"
    burst: tuple[int, int] = (1, 1)  # events of this step per instance (alert storms)
    tags: tuple[tuple[str, ...], ...] = ()  # candidate values of the list-valued ``tags`` fact
    tag_p: float = 0.0
    facts: bool = True  # False: the event has no ``facts`` key at all
    title: str = ""
    body: str = ""


def burst_mean(lo: int, hi: int) -> float:
    """Mean of ``lo + int(m * u * u)`` for uniform ``u`` (small bursts are common)."""
    m = hi - lo + 1
    return lo + sum(1.0 - math.sqrt(k / m) for k in range(1, m))


@dataclass(frozen=True)
class PFlow:
    name: str
    weight: float
    steps: tuple[PStep, ...]
    # (name, cause step, effect step, join subsystem, mechanism aliases, premise, outcome)
    causal: tuple[tuple[str, str, str, str, tuple[str, ...], str, str], ...]
    # (name, trigger step, response step, join subsystem, selectors: (subsystem, "id" | "query", text))
    silence: tuple[tuple[str, str, str, str, tuple[tuple[str, str, str], ...]], ...]
    business_hours: bool = True  # instances start in working hours (alert storms start any time)
    step_by_key: dict[str, PStep] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        self.step_by_key.update({s.key: s for s in self.steps})

    def start_min(self, key: str) -> float:
        s = self.step_by_key[key]
        return 0.0 if s.after is None else self.start_min(s.after) + s.hours[0]

    def end_max(self, key: str) -> float:
        """Latest time (hours after the instance starts) of the step's last event, minute rounding included."""
        s = self.step_by_key[key]
        start = 0.0 if s.after is None else self.end_max(s.after) + s.hours[1]
        return start + (s.burst[1] - 1) * max(BURST_GAPS) / 3600.0 + 1.0 / 60.0

    def max_gap_days(self, cause: str, effect: str) -> float:
        """A gap that always contains the response: the longest path plus a margin, in whole days."""
        return float(math.ceil((self.end_max(effect) - self.start_min(cause)) / 24.0 + 0.5))

    def max_events(self) -> int:
        return sum(s.burst[1] for s in self.steps)

    def expected_events(self) -> float:
        present: dict[str, float] = {}
        for s in self.steps:
            p = 1.0 - s.drop
            for r in s.requires:
                p *= present[r]
            present[s.key] = p
        return sum(present[s.key] * burst_mean(*s.burst) for s in self.steps)

    def subsystems_of(self, key: str) -> set[str]:
        """The ``artifact_ids`` keys an event of this step always carries."""
        s = self.step_by_key[key]
        return ({s.doc} if s.doc else set()) | {self.step_by_key[r].doc for r in s.refs if self.step_by_key[r].doc}


S = PStep
FLOWS: tuple[PFlow, ...] = (
    PFlow(
        "incident",
        0.07,
        (
            S(
                "alert",
                "alert_fired",
                (),
                "datadog",
                bot="datadog-bot",
                burst=(1, 8),
                facts=False,
                title="[datadog] {service} error rate above threshold",
                body="Monitor {service}-errors fired; p99 latency {p99} ms. Runbook in confluence.",
            ),
            S(
                "opened",
                "incident_opened",
                (("sre", 1, 2),),
                "jira",
                after="alert",
                hours=(0.1, 1.0),
                drop=0.3,
                refs=("alert",),
                tags=(("p1", "customer-facing"), ("p2",), ("p1",), ("p3", "internal")),
                tag_p=0.7,
                title="{service} degraded",
                body="Opened from {refs}. {customer} and others report failures in "
                "{service}. Incident commander {actor}.",
            ),
            S(
                "channel",
                "incident_channel_created",
                (("engineer", 1, 2), ("sre", 1, 1)),
                "slack",
                after="opened",
                hours=(0.05, 0.5),
                requires=("opened",),
                refs=("opened",),
                title="#inc-{service}",
                body="{actors}: war room for {refs}. Context from the on-call DM is private.",
            ),
            S(
                "mitigation",
                "mitigation_deployed",
                (("engineer", 1, 1),),
                "git",
                after="channel",
                hours=(0.5, 6.0),
                requires=("opened",),
                refs=("opened",),
                title="Roll back {service} config",
                body="Rolls back the {service} config change behind {refs}. Author {actor}.",
            ),
            S(
                "resolved",
                "incident_resolved",
                (("sre", 1, 1),),
                after="mitigation",
                hours=(0.5, 8.0),
                requires=("opened",),
                refs=("opened", "mitigation"),
            ),
            S(
                "postmortem",
                "postmortem_written",
                (("sre", 1, 1),),
                "confluence",
                after="resolved",
                hours=(12.0, 60.0),
                drop=0.2,
                requires=("opened",),
                refs=("opened",),
                title="Postmortem: {service} degradation",
                body="Timeline from the first alert to the resolution of {refs}. Root cause: a config push to "
                "{service}. Author {actor}.",
            ),
            S(
                "review",
                "postmortem_reviewed",
                (("manager", 1, 1), ("sre", 1, 1), ("engineer", 0, 2)),
                "zoom",
                after="postmortem",
                hours=(12.0, 48.0),
                drop=0.2,
                requires=("postmortem",),
                refs=("postmortem", "opened"),
                title="Transcript: postmortem review",
                body="{actors} reviewed {refs}; agreed two action items.",
            ),
            S(
                "actions",
                "action_items_filed",
                (("engineer", 1, 1),),
                "jira",
                after="review",
                hours=(1.0, 24.0),
                drop=0.2,
                requires=("review",),
                refs=("opened", "review"),
                title="Action items: {service} follow-ups",
                body="Follow-ups from {refs}: add a canary for {service}; alert on config drift. Owner {actor}.",
            ),
        ),
        (
            (
                "alert_opens_incident",
                "alert",
                "opened",
                "datadog",
                ("alerting", "paging"),
                "the alert had not fired",
                "no incident would have been opened",
            ),
            (
                "incident_opens_channel",
                "opened",
                "channel",
                "jira",
                ("war room", "incident process"),
                "the incident had not been opened",
                "no war-room channel would have been created",
            ),
            (
                "channel_coordinates_mitigation",
                "channel",
                "mitigation",
                "jira",
                ("coordination", "swarming"),
                "the war room had not been set up",
                "no mitigation would have been deployed",
            ),
            (
                "mitigation_resolves_incident",
                "mitigation",
                "resolved",
                "git",
                ("rollback", "hotfix"),
                "the mitigation had not been deployed",
                "the incident would not have been resolved",
            ),
            (
                "resolution_triggers_postmortem",
                "resolved",
                "postmortem",
                "jira",
                ("postmortem policy", "blameless review"),
                "the incident had not been resolved",
                "no postmortem would have been written",
            ),
            (
                "postmortem_triggers_review",
                "postmortem",
                "review",
                "confluence",
                ("review policy", "governance"),
                "the postmortem had not been written",
                "no postmortem review would have been held",
            ),
            (
                "review_files_action_items",
                "review",
                "actions",
                "zoom",
                ("follow-up tracking", "action items"),
                "the postmortem review had not been held",
                "no action items would have been filed",
            ),
        ),
        (
            ("incident_after_alert", "alert", "opened", "datadog", (("datadog", "id", "{artifact_ids.datadog}"),)),
            (
                "postmortem_after_resolution",
                "resolved",
                "postmortem",
                "jira",
                (("jira", "id", "{artifact_ids.jira}"), ("confluence", "query", "postmortem")),
            ),
            (
                "review_after_postmortem",
                "postmortem",
                "review",
                "confluence",
                (("confluence", "id", "{artifact_ids.confluence}"), ("zoom", "query", "postmortem review")),
            ),
            (
                "actions_after_review",
                "review",
                "actions",
                "zoom",
                (("zoom", "id", "{artifact_ids.zoom}"), ("jira", "id", "{artifact_ids.jira}")),
            ),
        ),
        business_hours=False,
    ),
    PFlow(
        "escalation",
        0.14,
        (
            S(
                "opened",
                "ticket_opened",
                (("support", 0, 1), ("external", 1, 1)),
                "zendesk",
                bot="zendesk-bot",
                tags=(("bug",), ("billing", "urgent"), ("how-to",), ("bug", "customer-facing")),
                tag_p=0.6,
                title="{service} not working",
                body="{customer} reports {service} failures since this morning.",
            ),
            S(
                "escalated",
                "ticket_escalated",
                (("support", 1, 1), ("engineer", 0, 1)),
                "jira",
                after="opened",
                hours=(1.0, 12.0),
                drop=0.5,
                refs=("opened",),
                title="Escalation: {customer} / {service}",
                body="Escalated from {refs} by {actor}. The customer is at renewal risk.",
            ),
            S(
                "ack",
                "escalation_acknowledged",
                (("engineer", 1, 2),),
                "slack",
                after="escalated",
                hours=(0.5, 4.0),
                drop=0.15,
                requires=("escalated",),
                refs=("escalated",),
                title="#escalations",
                body="{actor}: picking up {refs}; looking at {service}.",
            ),
            S(
                "notified",
                "customer_notified",
                (("support", 1, 1), ("external", 1, 1)),
                "email",
                after="escalated",
                hours=(2.0, 24.0),
                drop=0.15,
                requires=("escalated",),
                refs=("opened",),
                title="An update on your ticket",
                body="Dear {customer}, engineering is working on {service} ({refs}). {actor}",
            ),
            S(
                "resolved",
                "ticket_resolved",
                (("support", 1, 1),),
                after="opened",
                hours=(30.0, 96.0),
                refs=("opened", "escalated"),
            ),
            S(
                "csat",
                "csat_sent",
                (("external", 1, 1),),
                "email",
                bot="zendesk-bot",
                after="resolved",
                hours=(1.0, 24.0),
                drop=0.2,
                refs=("opened",),
                facts=False,
                title="How did we do?",
                body="Hi {customer}, your ticket {refs} is resolved. Please rate us.",
            ),
        ),
        (
            (
                "ticket_escalation",
                "opened",
                "escalated",
                "zendesk",
                ("severity routing", "escalation"),
                "the ticket had not been opened",
                "no escalation would have been raised",
            ),
            (
                "escalation_acknowledged_by_eng",
                "escalated",
                "ack",
                "jira",
                ("escalation pressure", "on-call"),
                "the ticket had not been escalated",
                "engineering would not have acknowledged it",
            ),
            (
                "escalation_notifies_customer",
                "escalated",
                "notified",
                "zendesk",
                ("customer communication", "sla"),
                "the ticket had not been escalated",
                "the customer would not have been notified",
            ),
            (
                "resolution_triggers_csat",
                "resolved",
                "csat",
                "zendesk",
                ("survey automation", "csat policy"),
                "the ticket had not been resolved",
                "no satisfaction survey would have been sent",
            ),
        ),
        (
            (
                "ack_after_escalation",
                "escalated",
                "ack",
                "jira",
                (("jira", "id", "{artifact_ids.jira}"), ("slack", "query", "picking up")),
            ),
            (
                "notice_after_escalation",
                "escalated",
                "notified",
                "zendesk",
                (("zendesk", "id", "{artifact_ids.zendesk}"), ("email", "query", "engineering update")),
            ),
            ("csat_after_resolution", "resolved", "csat", "zendesk", (("zendesk", "id", "{artifact_ids.zendesk}"),)),
        ),
        business_hours=False,
    ),
    PFlow(
        "pull_request",
        0.20,
        (
            S(
                "opened",
                "pr_opened",
                (("engineer", 1, 1),),
                "git",
                tags=(("backend",), ("frontend",), ("infra", "ops"), ("docs",)),
                tag_p=0.5,
                title="{service}: {change}",
                body="{change} in {service}. Author {actor}.",
            ),
            S(
                "requested",
                "review_requested",
                (("engineer", 1, 1),),
                "slack",
                after="opened",
                hours=(0.1, 2.0),
                refs=("opened",),
                title="#code-review",
                body="{actor}: review please: {refs}",
            ),
            S(
                "reviewed",
                "pr_reviewed",
                (("engineer", 1, 3),),
                "git",
                after="requested",
                hours=(1.0, 24.0),
                drop=0.12,
                refs=("opened",),
                title="Review",
                body="{actors}: looks good, one nit on tests of {refs}.",
            ),
            S(
                "merged",
                "pr_merged",
                (("engineer", 1, 1),),
                after="reviewed",
                hours=(0.5, 12.0),
                drop=0.12,
                requires=("reviewed",),
                refs=("opened",),
            ),
            S(
                "deployed",
                "deploy_completed",
                (("sre", 0, 1),),
                "datadog",
                bot="datadog-bot",
                after="merged",
                hours=(0.2, 6.0),
                drop=0.1,
                requires=("merged",),
                refs=("opened",),
                facts=False,
                title="Deploy of {service}",
                body="Deployed {refs} to production; error budget unchanged.",
            ),
        ),
        (
            (
                "pr_requests_review",
                "opened",
                "requested",
                "git",
                ("review process", "code review"),
                "the pull request had not been opened",
                "no review would have been requested",
            ),
            (
                "request_draws_review",
                "requested",
                "reviewed",
                "git",
                ("reviewer assignment", "review request"),
                "no review had been requested",
                "the pull request would not have been reviewed",
            ),
            (
                "review_enables_merge",
                "reviewed",
                "merged",
                "git",
                ("approval", "branch protection"),
                "the pull request had not been approved",
                "it would not have been merged",
            ),
            (
                "merge_triggers_deploy",
                "merged",
                "deployed",
                "git",
                ("continuous delivery", "ci/cd"),
                "the pull request had not been merged",
                "no deploy would have run",
            ),
        ),
        (
            ("review_after_request", "requested", "reviewed", "git", (("git", "id", "{artifact_ids.git}"),)),
            ("merge_after_review", "reviewed", "merged", "git", (("git", "query", "merged"),)),
            (
                "deploy_after_merge",
                "merged",
                "deployed",
                "git",
                (("git", "id", "{artifact_ids.git}"), ("datadog", "query", "deployed to production")),
            ),
        ),
    ),
    PFlow(
        "crm",
        0.10,
        (
            S(
                "created",
                "opportunity_created",
                (("sales", 1, 1),),
                "salesforce",
                tags=(("enterprise",), ("smb",), ("renewal", "expansion")),
                tag_p=0.6,
                title="{customer}: {service} expansion",
                body="Opportunity for {customer} ({service}), owner {actor}.",
            ),
            S(
                "call",
                "discovery_call_held",
                (("sales", 1, 2), ("external", 1, 2)),
                "zoom",
                after="created",
                hours=(24.0, 96.0),
                refs=("created",),
                title="Transcript: discovery call",
                body="{actors} discussed {service} volumes and pricing for {refs}.",
            ),
            S(
                "followup",
                "followup_email_sent",
                (("sales", 1, 1), ("external", 1, 1)),
                "email",
                after="call",
                hours=(1.0, 48.0),
                drop=0.2,
                refs=("created", "call"),
                title="Following up",
                body="Hi {customer}, thanks for the call. Next steps attached. {actor}",
            ),
            S(
                "updated",
                "crm_updated",
                (("sales", 1, 1),),
                "salesforce",
                after="call",
                hours=(2.0, 72.0),
                drop=0.2,
                refs=("created",),
                title="Activity log",
                body="Call logged for {refs}; stage moved to evaluation.",
            ),
            S(
                "proposal",
                "proposal_sent",
                (("sales", 1, 1), ("manager", 0, 1), ("external", 1, 1)),
                "email",
                after="call",
                hours=(24.0, 120.0),
                drop=0.3,
                refs=("created",),
                title="Proposal for {customer}",
                body="Proposal for {service}, referencing {refs}. Discount approved by a manager in a DM.",
            ),
            S(
                "closed",
                "deal_closed",
                (("sales", 1, 1),),
                after="proposal",
                hours=(24.0, 120.0),
                drop=0.3,
                requires=("proposal",),
                refs=("created", "proposal"),
            ),
        ),
        (
            (
                "opportunity_books_call",
                "created",
                "call",
                "salesforce",
                ("prospecting", "discovery"),
                "the opportunity had not been created",
                "no discovery call would have been held",
            ),
            (
                "call_prompts_followup",
                "call",
                "followup",
                "zoom",
                ("sales cadence", "follow-up"),
                "the discovery call had not been held",
                "no follow-up email would have been sent",
            ),
            (
                "call_leads_to_proposal",
                "call",
                "proposal",
                "salesforce",
                ("qualification", "buying intent"),
                "the discovery call had not been held",
                "no proposal would have been sent",
            ),
            (
                "proposal_closes_deal",
                "proposal",
                "closed",
                "email",
                ("negotiation", "pricing"),
                "the proposal had not been sent",
                "the deal would not have closed",
            ),
        ),
        (
            (
                "followup_after_call",
                "call",
                "followup",
                "zoom",
                (("zoom", "id", "{artifact_ids.zoom}"), ("email", "query", "following up")),
            ),
            ("crm_after_call", "call", "updated", "salesforce", (("salesforce", "id", "{artifact_ids.salesforce}"),)),
            (
                "proposal_after_call",
                "call",
                "proposal",
                "salesforce",
                (("salesforce", "id", "{artifact_ids.salesforce}"), ("email", "query", "proposal")),
            ),
        ),
    ),
    PFlow(
        "departure",
        0.012,
        (
            S(
                "resigned",
                "resignation_submitted",
                (("people_ops", 1, 1), ("engineer", 1, 1)),
                "email",
                restricted="roles:people_ops,manager",
                title="Resignation",
                body="Confidential: {actors} discussed a resignation; notice period two weeks.",
            ),
            S(
                "exit",
                "exit_interview_held",
                (("people_ops", 1, 1), ("engineer", 1, 1)),
                "zoom",
                after="resigned",
                hours=(24.0, 120.0),
                drop=0.2,
                restricted="actors",
                refs=("resigned",),
                title="Exit interview",
                body="Confidential notes by {actor}: workload and on-call load were the main reasons.",
            ),
            S(
                "revoked",
                "access_revoked",
                (("sre", 1, 1),),
                "jira",
                after="resigned",
                hours=(24.0, 160.0),
                drop=0.15,
                refs=("resigned",),
                title="Revoke access",
                body="Remove the leaver from SSO, VPN and on-call. {actor}",
            ),
            S(
                "handover",
                "handover_doc_written",
                (("engineer", 1, 2),),
                "confluence",
                after="resigned",
                hours=(24.0, 120.0),
                drop=0.25,
                refs=("resigned",),
                title="Handover notes",
                body="Services handed over: {service}. New owners {actors}.",
            ),
        ),
        (
            (
                "resignation_schedules_exit_interview",
                "resigned",
                "exit",
                "email",
                ("offboarding", "hr process"),
                "nobody had resigned",
                "no exit interview would have been held",
            ),
            (
                "resignation_triggers_access_revocation",
                "resigned",
                "revoked",
                "email",
                ("access control", "offboarding"),
                "nobody had resigned",
                "no access would have been revoked",
            ),
            (
                "resignation_triggers_handover",
                "resigned",
                "handover",
                "email",
                ("knowledge transfer", "handover"),
                "nobody had resigned",
                "no handover notes would have been written",
            ),
        ),
        (
            (
                "exit_interview_after_resignation",
                "resigned",
                "exit",
                "email",
                (("email", "id", "{artifact_ids.email}"), ("zoom", "query", "exit interview")),
            ),
            (
                "revocation_after_resignation",
                "resigned",
                "revoked",
                "email",
                (("email", "id", "{artifact_ids.email}"), ("jira", "query", "revoke access")),
            ),
            (
                "handover_after_resignation",
                "resigned",
                "handover",
                "email",
                (("email", "id", "{artifact_ids.email}"), ("confluence", "query", "handover notes")),
            ),
        ),
    ),
    PFlow(
        "onboarding",
        0.012,
        (
            S(
                "offer",
                "offer_accepted",
                (("people_ops", 1, 1), ("external", 1, 1)),
                "email",
                restricted="roles:people_ops,manager",
                title="Offer accepted",
                body="Confidential: a candidate accepted the offer for the {service} team; start in two weeks. {actor}",
            ),
            S(
                "provisioned",
                "accounts_provisioned",
                (("sre", 1, 1),),
                "jira",
                after="offer",
                hours=(24.0, 96.0),
                drop=0.15,
                refs=("offer",),
                title="Provision accounts",
                body="SSO, git and datadog for a new hire. {actor}",
            ),
            S(
                "buddy",
                "buddy_assigned",
                (("manager", 1, 1), ("engineer", 1, 1)),
                "slack",
                after="offer",
                hours=(24.0, 72.0),
                drop=0.2,
                refs=("offer",),
                title="#onboarding",
                body="{actors}: buddy for the new {service} hire is assigned.",
            ),
            S(
                "doc",
                "onboarding_doc_completed",
                (("people_ops", 1, 1),),
                "confluence",
                after="provisioned",
                hours=(24.0, 96.0),
                drop=0.2,
                requires=("provisioned",),
                refs=("provisioned", "offer"),
                title="Onboarding checklist",
                body="Accounts ({refs}) done; first week plan. {actor}",
            ),
        ),
        (
            (
                "offer_triggers_provisioning",
                "offer",
                "provisioned",
                "email",
                ("it onboarding", "provisioning"),
                "the offer had not been accepted",
                "no accounts would have been provisioned",
            ),
            (
                "offer_triggers_buddy",
                "offer",
                "buddy",
                "email",
                ("buddy program", "onboarding"),
                "the offer had not been accepted",
                "no buddy would have been assigned",
            ),
            (
                "provisioning_enables_checklist",
                "provisioned",
                "doc",
                "jira",
                ("onboarding checklist", "readiness"),
                "the accounts had not been provisioned",
                "the onboarding checklist would not have been completed",
            ),
        ),
        (
            (
                "provisioning_after_offer",
                "offer",
                "provisioned",
                "email",
                (("email", "id", "{artifact_ids.email}"), ("jira", "query", "provision accounts")),
            ),
            ("buddy_after_offer", "offer", "buddy", "email", (("email", "id", "{artifact_ids.email}"),)),
            (
                "checklist_after_provisioning",
                "provisioned",
                "doc",
                "jira",
                (("jira", "id", "{artifact_ids.jira}"), ("confluence", "query", "onboarding checklist")),
            ),
        ),
    ),
)

# Single-instance chatter: Slack threads (1-6 messages, minutes apart), restricted DMs, meetings,
# page edits that only reference an earlier page. Weight shared with the workflows.
CHATTER_WEIGHT = 0.9
CHATTER = (("thread", 0.55), ("dm", 0.2), ("meeting", 0.1), ("edit", 0.15))
THREAD_MAX = 6
MEETING_TAGS = (("sync",), ("planning", "roadmap"), ("1:1",), ("all-hands",))


def _chatter_mean() -> float:
    return sum(p * (burst_mean(1, THREAD_MAX) if kind == "thread" else 1.0) for kind, p in CHATTER) / sum(
        p for _k, p in CHATTER
    )


def tail_hours() -> float:
    return max(f.end_max(s.key) for f in FLOWS for s in f.steps)


# ---------------------------------------------------------------------------- manifest


def evaluation_specs(fmt: str = "native") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The 25 causal link specs and 19 silence pair specs, joined on ``artifact_ids.<subsystem>``.

    Silence search spaces are selector mappings: ``search_space_selectors`` in the
    native format, ``search_space`` in the original one."""
    causal, silence = [], []
    for f in FLOWS:
        for name, c, e, sub, aliases, premise, outcome in f.causal:
            path = f"artifact_ids.{sub}"
            causal.append(
                {
                    "name": name,
                    "cause_event_type": f.step_by_key[c].type,
                    "effect_event_type": f.step_by_key[e].type,
                    "max_gap_days": f.max_gap_days(c, e),
                    "join": [{"cause": path, "effect": path}],
                    "mechanism_aliases": list(aliases),
                    "premise_template": premise,
                    "outcome_template": outcome,
                }
            )
        for name, t, r, sub, selectors in f.silence:
            path = f"artifact_ids.{sub}"
            rs = f.step_by_key[r]
            sels = [
                {"subsystem": s, ("id_template" if kind == "id" else "query_template"): text}
                for s, kind, text in selectors
            ]
            silence.append(
                {
                    "name": name,
                    "trigger_event_type": f.step_by_key[t].type,
                    "response_event_type": rs.type,
                    "max_gap_days": f.max_gap_days(t, r),
                    "join": [{"trigger": path, "response": path}],
                    "search_space_subsystems": [rs.doc or sub],
                    ("search_space" if fmt == "original" else "search_space_selectors"): sels,
                }
            )
    return causal, silence


# ---------------------------------------------------------------------------- writing


class _TimeOrderedSink(_Sink):
    """A block's events in time order (then id), like an export; artifacts as the shared sink writes them."""

    def __init__(self, out: Path, fmt: str):
        super().__init__(out, fmt)
        self._keyed: list[tuple[str, str, str]] = []

    def event(self, rec: dict[str, Any]) -> None:
        self._keyed.append((rec["timestamp"], rec["id"], self._dumps(rec)))
        self.n_events += 1

    def finish(self) -> None:
        self._keyed.sort()
        self.events = [line for _t, _i, line in self._keyed]
        self._keyed = []


_MASK40 = (1 << 40) - 1


class _Writer:
    """One block of the paper org: ids, clock and the rings chatter refers to."""

    def __init__(self, rng: random.Random, cast: _Cast, sink: _Sink, days: int, counts: dict[str, int], block: int):
        self.rng, self.cast, self.w, self.counts, self.block = rng, cast, sink, counts, block
        self.iso = iso_writer(days)
        self.art_seq = {sub: block * 1_000_000 for sub in PREFIX}
        # recent shared records (created, subsystem, id) that threads point at, and confluence pages that
        # edits point at; instances write ahead of the clock, so a pick skips what is not created yet
        self.records: list[tuple[float, str, str]] = []
        self.pages: list[tuple[float, str, str]] = []
        self.internal = cast.internal
        self.chat_cum = cumulative([p for _k, p in CHATTER])

    # -- ids and time

    def event_id(self) -> str:
        """Opaque and unique: a bijection of (block, index in block) onto 40 bits."""
        n = (self.block << 24) + self.w.n_events
        return f"evt-{(n * 0x9E3779B97F4A7C15 + 0x5DEECE66D) & _MASK40:010x}"

    def artifact_id(self, sub: str) -> str:
        self.art_seq[sub] += 1
        return f"{PREFIX[sub]}-{self.art_seq[sub]:04d}"

    def earlier(self, ring: list[tuple[float, str, str]], t: float) -> tuple[float, str, str] | None:
        """A random entry of ``ring`` created at or before ``t`` (the first such from a random start)."""
        if not ring:
            return None
        start = _below(self.rng, len(ring))
        for k in range(len(ring)):
            x = ring[(start + k) % len(ring)]
            if x[0] <= t:
                return x
        return None

    @staticmethod
    def remember(ring: list[tuple[float, str, str]], item: tuple[float, str, str]) -> None:
        ring.append(item)
        if len(ring) > 64:
            del ring[0]

    @staticmethod
    def working_hours(t0: float) -> float:
        day, sec = divmod(t0, 86400.0)
        return day * 86400.0 + (WORK_START_H + WORK_HOURS * sec / 86400.0) * 3600.0

    def burst_size(self, lo: int, hi: int) -> int:
        u = self.rng.random()
        return lo + int((hi - lo + 1) * u * u)

    # -- records

    def people(self, crew: tuple[tuple[str, int, int], ...], t: float) -> list[str]:
        out: list[str] = []
        for role, lo, hi in crew:
            n = lo + _below(self.rng, hi - lo + 1)
            if n:
                out += [a for a in self.cast.pick(self.rng, role, t, n) if a not in out]
        return out

    def document(self, sub: str, t: float, actors: list[str], title: str, body: str, restricted: str | None) -> str:
        aid = self.artifact_id(sub)
        rec: dict[str, Any] = {
            "id": aid,
            "subsystem": sub,
            TIME_FIELD.get(sub, "timestamp"): self.iso(t),
            "title": title,
            "actors": actors,
            "body": body,
        }
        if restricted == "actors":
            rec["visibility"] = {"actors": sorted(a for a in actors if not a.endswith("-bot"))}
        elif restricted:
            rec["visibility"] = {"roles": restricted.split(":", 1)[1].split(",")}
        self.w.artifact(rec)
        return aid

    def emit(self, etype: str, t: float, actors: list[str], ids: dict[str, Any], facts: dict[str, Any] | None) -> None:
        rec: dict[str, Any] = {
            "id": self.event_id(),
            "type": etype,
            "timestamp": self.iso(t),
            "actors": actors,
            "artifact_ids": ids,
        }
        if facts is not None:
            rec["facts"] = facts
        self.w.event(rec)

    # -- workflows

    def instance(self, f: PFlow, t0: float) -> None:
        rng = self.rng
        self.counts[f.name] += 1
        if f.business_hours:
            t0 = self.working_hours(t0)
        values: dict[str, Any] = {
            "service": SERVICES[_below(rng, len(SERVICES))],
            "customer": CUSTOMERS[_below(rng, len(CUSTOMERS))],
            "p99": 400 + _below(rng, 4000),
            "change": _CHANGES[_below(rng, len(_CHANGES))],
        }
        ends: dict[str, float] = {}  # time of each step's last event
        present: dict[str, bool] = {}
        docs: dict[str, list[str]] = {}
        created: dict[str, float] = {}  # time of each step's first document
        for idx, s in enumerate(f.steps, start=1):
            if s.after is None:
                t = t0
            else:
                lo, hi = s.hours
                t = ends[s.after] + (lo + (hi - lo) * rng.random()) * 3600.0
            t = _MINUTE * int(t // _MINUTE)
            if s.after is not None and t <= ends[s.after]:
                t = ends[s.after] + _MINUTE  # strictly after what it follows, at minute resolution
            alive = (s.drop == 0.0 or rng.random() >= s.drop) and all(present[r] for r in s.requires)
            present[s.key] = alive
            n = self.burst_size(*s.burst) if alive and s.burst != (1, 1) else 1
            if not alive:
                ends[s.key] = t
                continue
            created[s.key] = t
            for k in range(n):
                if k:
                    t += BURST_GAPS[_below(rng, len(BURST_GAPS))]
                self.step_event(f, idx, s, t, values, present, docs)
            ends[s.key] = t
        for s in f.steps:  # the instance's first open document is what chatter points at
            if s.doc and present[s.key] and not s.restricted:
                self.remember(self.records, (created[s.key], s.doc, docs[s.key][0]))
                break

    def step_event(
        self,
        f: PFlow,
        idx: int,
        s: PStep,
        t: float,
        values: dict[str, Any],
        present: dict[str, bool],
        docs: dict[str, list[str]],
    ) -> None:
        rng = self.rng
        people = self.people(s.crew, t)
        actors = ([s.bot] if s.bot else []) + people
        ids: dict[str, Any] = {}
        refs: list[str] = []
        for r in s.refs:
            if present.get(r):
                sub = f.step_by_key[r].doc
                for aid in docs.get(r, ()):
                    _add(ids, sub, aid)
                    refs.append(aid)
        values["actor"] = people[0] if people else s.bot
        values["actors"] = " and ".join(people) if people else s.bot
        values["refs"] = ", ".join(refs) if refs else "the earlier thread"
        if s.doc:
            aid = self.document(s.doc, t, actors, s.title.format_map(values), s.body.format_map(values), s.restricted)
            docs.setdefault(s.key, []).append(aid)
            _add(ids, s.doc, aid, first=True)
            if s.doc == "confluence" and not s.restricted:
                self.remember(self.pages, (t, s.doc, aid))
        facts: dict[str, Any] | None = None
        if s.facts:
            facts = {"flow": f.name, "step": idx}
            if s.tags and rng.random() < s.tag_p:
                facts["tags"] = list(s.tags[_below(rng, len(s.tags))])
        self.emit(s.type, t, actors, ids, facts)

    # -- chatter

    def chatter(self, t0: float, remaining: int) -> None:
        rng = self.rng
        self.counts["chatter"] += 1
        kind = CHATTER[pick_cumulative(rng, self.chat_cum)][0]
        t = _MINUTE * int(self.working_hours(t0) // _MINUTE)
        roles = self.internal
        if kind == "thread":
            n = min(self.burst_size(1, THREAD_MAX), remaining)
            about = self.earlier(self.records, t) if rng.random() < 0.3 else None
            root = ""
            for k in range(n):
                if k:
                    t += (0, 0, 60, 60, 120, 300)[_below(rng, 6)]
                who = self.cast.pick(rng, roles[_below(rng, len(roles))], t)
                text = (
                    "question about " + (about[2] if about else "the release")
                    if k == 0
                    else ("+1" if rng.random() < 0.3 else "looking")
                )
                aid = self.document("slack", t, who, "#team", f"{who[0]}: {text}", None)
                if k == 0:
                    root = aid
                    ids: dict[str, Any] = {"slack": aid}
                    if about:
                        _add(ids, about[1], about[2])
                else:
                    ids = {"slack": [root, aid]}
                self.emit("message_posted", t, who, ids, None)
        elif kind == "dm":
            a = self.cast.pick(rng, roles[_below(rng, len(roles))], t)[0]
            b = a
            while b == a:
                b = self.cast.pick(rng, roles[_below(rng, len(roles))], t)[0]
            aid = self.document(
                "slack", t, [a, b], f"DM {a} / {b}", f"{a}: quick question, keep this between us. {b}: sure.", "actors"
            )
            self.emit("dm_sent", t, [a, b], {"slack": aid}, None)
        elif kind == "meeting":
            people: list[str] = []
            for _ in range(3 + _below(rng, 2)):
                x = self.cast.pick(rng, roles[_below(rng, len(roles))], t)[0]
                if x not in people:
                    people.append(x)
            aid = self.document(
                "zoom",
                t,
                people,
                "Transcript: sync",
                f"{', '.join(people)} met; discussed planning and staffing.",
                None,
            )
            facts = {"tags": list(MEETING_TAGS[_below(rng, len(MEETING_TAGS))])} if rng.random() < 0.5 else {}
            self.emit("meeting_held", t, people, {"zoom": aid}, facts)
        else:
            who = self.cast.pick(rng, ("engineer", "product", "sre")[_below(rng, 3)], t)
            page = self.earlier(self.pages, t)
            if page is not None:  # an edit only references the earlier page
                ids = {"confluence": page[2]}
            else:
                aid = self.document("confluence", t, who, "Team page", f"{who[0]} started the team page.", None)
                self.remember(self.pages, (t, "confluence", aid))
                ids = {"confluence": aid}
            self.emit("doc_edited", t, who, ids, {})


def _add(ids: dict[str, Any], sub: str, aid: str, first: bool = False) -> None:
    """Reference ``aid`` under ``sub``: a scalar, or a list once there are several."""
    cur = ids.get(sub)
    if cur is None:
        ids[sub] = aid
    elif isinstance(cur, str):
        if cur != aid:
            ids[sub] = [aid, cur] if first else [cur, aid]
    elif aid not in cur:
        if first:
            cur.insert(0, aid)
        else:
            cur.append(aid)


def generate(
    rng: random.Random,
    cast: _Cast,
    sink: _Sink,
    n_events: int,
    days: int,
    counts: dict[str, int],
    block: int = 0,
    n_blocks: int = 1,
) -> None:
    """Write exactly ``n_events`` events of block ``block`` (the shared schedule, paper-shaped records)."""
    wr = _Writer(rng, cast, sink, days, counts, block)
    flows = list(FLOWS)
    total = sum(f.weight for f in flows) + CHATTER_WEIGHT
    mean = (sum(f.weight * f.expected_events() for f in flows) + CHATTER_WEIGHT * _chatter_mean()) / total
    drive(
        rng,
        sink,
        n_events,
        weights=[f.weight for f in flows],
        chatter_weight=CHATTER_WEIGHT,
        mean_events=mean,
        span_seconds=(days - tail_hours() / 24.0) * 86400.0,
        block=block,
        n_blocks=n_blocks,
        max_events=[f.max_events() for f in flows],
        instance=lambda k, t0: wr.instance(flows[k], t0),
        chatter=wr.chatter,
    )


STYLE = Style(
    name="paper",
    flows=tuple(f.name for f in FLOWS),
    tail_hours=tail_hours,
    specs=evaluation_specs,
    generate=generate,
    make_sink=_TimeOrderedSink,
    summary="bookkeeping-only facts, ids only in artifact_ids, dense same-minute events",
)
