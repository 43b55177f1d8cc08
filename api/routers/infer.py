"""``POST /infer``: a contract inferred from sample messages."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from api.deps import OffloadDep, SettingsDep
from contracts.contract import NAME_PATTERN, dump_contract, validate_name
from contracts.errors import ContractFileError, ContractsError, InputError

router = APIRouter(tags=["infer"])


class InferRequest(BaseModel):
    """Sample messages as JSON values (Kafka values, or kcat ``-J`` records) and options."""

    model_config = ConfigDict(extra="forbid")

    messages: list[Any] = Field(min_length=1, description="sample messages, in order")
    format: str | None = Field(default=None, max_length=100, description="auto-detected if absent")
    name: str | None = Field(default=None, pattern=NAME_PATTERN, description="the contract name")
    topic: str | None = Field(default=None, max_length=300)
    infer_types: bool = Field(default=False, description="infer types of schemaless values")


class TooManyMessagesError(ContractsError):
    """More messages than the service accepts in one request."""

    http_status = 413


@router.post("/infer", summary="Infer a contract from sample messages")
async def infer(
    request: InferRequest, settings: SettingsDep, offload: OffloadDep
) -> dict[str, Any]:
    """The inferred contract (as data and as the YAML file), the format and what was seen."""
    return await offload.run(infer_contract, request, settings.max_messages)


def infer_contract(request: InferRequest, max_messages: int) -> dict[str, Any]:
    """What ``POST /infer`` answers (runs in a worker: inference is CPU work)."""
    from contracts.errors import DetectionError
    from contracts.formats import detect_format, get_format
    from contracts.formats.base import InferOptions
    from contracts.io import to_message
    from contracts.jsondoc import check_value
    from contracts.pipeline import Report, Stream, infer_stream

    if request.name is not None:
        try:
            validate_name(request.name)  # the rule of PUT /contracts/{name} (no '..')
        except ContractFileError as err:
            raise ContractFileError(err.what, "$.name") from None
    if len(request.messages) > max_messages:
        raise TooManyMessagesError(
            f"{len(request.messages)} messages sent; at most {max_messages} per request",
            "$.messages",
        )
    # the rules every input reader applies, and the numbers as those readers hold them
    values = [check_value(v, "", f"$.messages[{i}]") for i, v in enumerate(request.messages)]
    messages = [to_message(v, f"message {i}") for i, v in enumerate(values, 1)]
    try:
        fmt = get_format(request.format) if request.format else detect_format(messages)
    except DetectionError as err:  # its CLI hint names a flag; here it is a request field
        what = err.what.replace("pass --format NAME", 'set "format" in the request')
        raise DetectionError(what, "$.format") from None
    if fmt.input_kind != "json":
        raise InputError(
            f"format {fmt.name!r} reads {fmt.input_kind} input, which /infer does not accept; "
            "use `cdc-contracts infer`",
            "$.format",
        )
    options = InferOptions(name=request.name, infer_types=request.infer_types, topic=request.topic)
    report = Report()
    try:
        result = infer_stream(Stream.from_messages(fmt, messages), options, report=report)
    finally:  # a request is all good or refused, for its first bad message
        if report.unusable:
            raise report.unusable[0]
        if report.problems:
            first = report.problems[0]
            raise InputError(first.message, f"{first.where} {first.path}")
    return {
        "format": fmt.name,
        "messages": result.messages,
        "contract": result.contract.to_dict(),
        "yaml": dump_contract(result.contract),
        "history": [
            {
                "version": h.version,
                "first_seen": h.first_seen,
                "messages": h.messages,
                "columns": list(h.columns),
            }
            for h in result.history
        ],
        "controls": dict(result.controls),
        "warnings": list(result.warnings),
    }
