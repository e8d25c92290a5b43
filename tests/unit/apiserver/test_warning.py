"""Warning headers as upstream's recorder writes them (filters/warning.go and its tests)."""

from __future__ import annotations

from minikube_py.apiserver.warning import WarningRecorder, warning_header, warning_headers


def test_each_warning_is_its_own_header_in_order_and_once() -> None:
    assert warning_headers(["mytext1", "mytext2", "mytext1", "mytext3"]) == [
        '299 - "mytext1"', '299 - "mytext2"', '299 - "mytext3"']


def test_quotes_and_backslashes_are_escaped_control_characters_refused() -> None:
    assert warning_header('unknown field "a\\b"') == '299 - "unknown field \\"a\\\\b\\""'
    assert warning_header("my\ntext") is None
    assert warning_header("c1 \x85 control") is None
    assert warning_header("lone \ud800 surrogate") is None
    assert warning_headers(["my\ntext", "ok"]) == ['299 - "ok"']


def test_truncation_as_upstreams_test() -> None:
    """Upstream's TestTruncation with its limits of 25 and 5 runes."""
    recorder = WarningRecorder(limit=25, item_limit=5)
    for text in ("aaaaaaaaaa", "aaaaaaaaaa", "bb", "ccc", "Iñtërnâtiô"):
        recorder.add(text)
    assert recorder.headers == ['299 - "aaaaaaaaaa"', '299 - "bb"', '299 - "ccc"', '299 - "Iñtërnâtiô"']
    for text in ("e", "ffffffffff", "ffffffffff", "gggggggggg", "h"):
        recorder.add(text)
    assert recorder.headers == ['299 - "aaaaa"', '299 - "bb"', '299 - "ccc"', '299 - "Iñtër"',
                                '299 - "e"', '299 - "fffff"', '299 - "ggggg"']
