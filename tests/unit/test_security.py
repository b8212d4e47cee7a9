"""Every attack on the study by the people it measures, by name, and where it is tested.

A rater with a real login role on the team server, or with a hand-edited `.annot` package, tries
to read, erase or forge what the study measures; each row names the attack and the test that
performs it (each failed on the code before its fix). The test below holds the list to the
test modules both ways: an attack test missing from the list, or a listed test that is gone,
fails. What a rater role and a package can and cannot do is stated for users in docs/team.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent

# a guarantee the study keeps against the people it measures -> (attack, "module::test")
ATTACKS: dict[str, list[tuple[str, str]]] = {
    "1 row-level security cannot be bypassed": [
        (
            "a temp table named raters",
            "server::test_temp_table_named_raters_makes_a_rater_someone_else",
        ),
        (
            "a same-named table and function in another schema",
            "server::test_same_named_objects_in_another_schema_change_who_a_rater_is",
        ),
        (
            "a row-rule function resolving names on the caller's path",
            "server::test_a_row_rule_function_resolves_names_through_the_callers_search_path",
        ),
    ],
    "2 a correction supersedes only the rater's own answer": [
        (
            "a package correcting another rater's answer",
            "packages::test_a_package_correcting_another_raters_answer_is_refused",
        ),
        (
            "a correction moved onto another item",
            "packages::test_a_correction_pointing_at_another_item_is_refused",
        ),
        (
            "SQL superseding another rater's row (both engines)",
            "packages::test_a_direct_insert_superseding_another_raters_row_is_refused_by_the_trigger",
        ),
        (
            "an answer inside another rater's session",
            "server::test_rater_answers_in_another_raters_session",
        ),
        (
            "a rater role's correction superseding another rater's answer",
            "server::test_rater_supersedes_another_raters_answer",
        ),
        (
            "roles run again drop the correction triggers",
            "server::test_roles_run_again_restores_correction_triggers_an_earlier_run_dropped",
        ),
    ],
    "3 merge and server inserts validate content": [
        (
            "gate MAYBE, scale 99, choice banana, bad JSON, bad time...",
            "packages::test_a_row_the_app_would_not_store_refuses_the_whole_package",
        ),
        ("a 50 MB reason", "packages::test_an_oversized_reason_refuses_the_whole_package"),
        (
            "one unparsable stored answer",
            "packages::test_one_unparsable_stored_answer_leaves_report_export_and_review_working",
        ),
        (
            "a hand-written answer the app would refuse",
            "server::test_rater_inserts_an_answer_the_app_would_refuse",
        ),
        (
            "a hand-written pair vote the app would refuse",
            "server::test_rater_inserts_a_pair_vote_the_app_would_refuse",
        ),
    ],
    "4 sessions, calibrations and qualifications are the rater's own": [
        (
            "a package relabelled as another rater or the operator",
            "packages::test_a_package_relabelled_as_another_rater_or_an_operator_is_refused",
        ),
        (
            "a package the lead never exported",
            "packages::test_a_package_the_lead_never_exported_is_refused",
        ),
        (
            "a forged qualified calibration in a package",
            "packages::test_a_forged_qualified_calibration_is_recomputed_by_the_lead",
        ),
        (
            "a live answer on a calibration item",
            "packages::test_a_live_answer_on_a_calibration_item_is_refused_and_silent_answers_merge_once",
        ),
        (
            "qualified = true inserted on the server",
            "server::test_rater_inserts_a_qualified_calibration",
        ),
    ],
    "5 no side channel in what a rater reads": [
        (
            "study-wide item numbers and answer counts in a package",
            "packages::test_a_package_holds_no_study_wide_item_numbers_or_answer_counts",
        ),
        (
            "silent anchors told apart in a package",
            "packages::test_silent_anchors_are_rows_like_live_items_in_every_table",
        ),
        (
            "anchor references in the package's bytes",
            "packages::test_no_reference_or_rationale_of_a_silent_anchor_in_the_package_bytes",
        ),
        (
            "items and media not dealt to the rater in a package",
            "packages::test_a_package_holds_only_items_and_media_dealt_to_its_rater",
        ),
        (
            "two raters' packages joined by image name",
            "packages::test_two_raters_packages_cannot_be_joined_by_image_name",
        ),
        (
            "an image swapped under its package name",
            "packages::test_an_image_swapped_under_its_package_name_is_refused",
        ),
        (
            "drift measured differently through a package",
            "packages::test_drift_after_a_package_round_trip_equals_the_same_answers_in_the_study",
        ),
        (
            "anchors picked out on the server",
            "server::test_rater_picks_out_anchors_by_is_anchor_or_reads_their_references",
        ),
        (
            "the anchor pool listed to pick out silent anchors",
            "server::test_rater_lists_the_anchor_pool_and_picks_out_silent_anchors",
        ),
        (
            "a showing inserted and rolled back to test an item",
            "server::test_rater_tells_anchors_apart_by_a_showing_inserted_and_rolled_back",
        ),
        (
            "the reference of a silent anchor it answered",
            "server::test_rater_reads_the_reference_of_a_silent_anchor_it_answered",
        ),
        (
            "the codes its package gave silent anchors",
            "server::test_rater_reads_the_codes_its_package_gave_silent_anchors",
        ),
        (
            "items and images dealt to another rater",
            "server::test_rater_reads_items_and_images_dealt_to_another",
        ),
        (
            "hidden rows counted through sequences",
            "server::test_rater_counts_hidden_rows_through_sequences",
        ),
        (
            "other raters' names through pg_roles / pg_auth_members",
            "server::test_rater_lists_other_raters_names_through_pg_roles_and_pg_auth_members",
        ),
        (
            "the generator told by an item's number within its case",
            "item_order::test_item_ids_do_not_tell_the_generator_by_position_within_the_case",
        ),
        (
            "the item order of an import reproduced or reversed",
            "item_order::test_the_same_study_imported_the_same_way_gets_the_same_ids",
        ),
        ("anchors told by their numbers", "item_order::test_anchors_are_shuffled_among_themselves"),
        (
            "item numbers carried in the names of pairs",
            "item_order::test_pair_names_come_from_item_ids_not_row_numbers",
        ),
    ],
    "6 roles belong to one study": [
        (
            "an old database's raters reach a new one of its name",
            "server::test_raters_of_an_old_database_reach_a_new_one_of_the_same_name",
        ),
        (
            "a rater named o'ne\"il$$; x",
            "server::test_rater_named_with_quotes_and_dollars_breaks_the_role_sql",
        ),
        (
            "roles --drop leaves roles behind",
            "server::test_roles_drop_leaves_the_studys_roles_behind",
        ),
        (
            "roles of the old scheme keep their rights",
            "server::test_raters_of_the_old_role_scheme_keep_their_rights_after_roles_run_again",
        ),
    ],
    "7 raters cannot stop the lead": [
        (
            "a rater holds the study lock",
            "server::test_rater_holds_the_study_lock_and_stops_the_leads_imports",
        ),
        (
            "a rater inserts merges or assignments",
            "server::test_rater_inserts_merges_and_assignments",
        ),
    ],
    "8 a package cannot hang the lead": [
        (
            "views, triggers or virtual tables in a package",
            "packages::test_a_package_defining_views_triggers_or_virtual_tables_is_refused",
        ),
        (
            "a 3000-long correction chain",
            "packages::test_a_3000_long_correction_chain_is_the_raters_and_merges_whole",
        ),
    ],
    "9 the remaining crashes end in one line": [
        ("a media blob stored as text", "inputs::test_media_blob_stored_as_text"),
        ("an answer pointing at a missing item", "inputs::test_answer_pointing_at_a_missing_item"),
        (
            "Label Studio lead_time 1e300",
            "inputs::test_label_studio_lead_time_1e300_is_stored_at_the_cap",
        ),
        ("Prodigy _timestamp 1e20 / -1e15 / NaN", "inputs::test_prodigy_timestamp_out_of_range"),
        (
            "a created_at at the calendar's edge",
            "inputs::test_ratings_created_at_at_the_calendar_edge",
        ),
        ("roles --print | head", "inputs::test_roles_print_into_a_closed_pipe"),
        (
            "any command into a closed pipe",
            "inputs::test_rater_list_into_a_pipe_closed_before_it_writes",
        ),
        ("a bad keys.toml", "inputs::test_bad_keys_file"),
        ("a bad settings file", "inputs::test_bad_settings_file"),
        (
            "the app on bad settings and keys files",
            "inputs::test_app_starts_on_a_bad_settings_file_and_keys_file",
        ),
    ],
    "10 CSV is quoted by the standard": [
        ("a reason holding a bare CR", "inputs::test_bare_carriage_return_in_a_reason"),
        (
            "texts starting with = + - @ round trip",
            "inputs::test_formula_texts_round_trip_through_import_ratings",
        ),
    ],
    "11 unicode in names": [
        (
            "bidi / zero-width in a rater name",
            "inputs::test_bidi_and_zero_width_characters_in_a_rater_name",
        ),
        (
            "bidi / zero-width in a generator name",
            "inputs::test_bidi_and_zero_width_characters_in_a_generator_name",
        ),
        ("U+202E in a study name", "inputs::test_bidi_override_in_a_study_name"),
        (
            "rubric texts in the dataset card",
            "inputs::test_hugging_face_card_holds_rubric_texts_as_data",
        ),
        (
            "a study name with YAML and astral characters in the card",
            "inputs::test_hugging_face_card_study_name_with_yaml_and_astral_characters",
        ),
        ("terminal controls in an error line", "inputs::test_error_line_escapes_terminal_controls"),
        (
            "a plain error line stays plain",
            "inputs::test_input_error_one_line_is_the_escaped_message",
        ),
    ],
    "the fourth pass: one rule for an answer's time": [
        (
            "a package row dated 2099",
            "packages::test_a_package_row_dated_2099_is_refused_naming_the_clock",
        ),
        (
            "ratings dated 2099",
            "inputs::test_ratings_dated_in_2099_are_refused_by_the_rule_of_every_answers_time",
        ),
        (
            "a rater's clock days ahead on the server",
            "server::test_a_rater_whose_clock_is_days_ahead_is_told_it_is_the_clock",
        ),
    ],
    "the fourth pass: names that read like another or hold a path": [
        (
            "NFD / Cyrillic / fullwidth / case look-alikes, '../../x', 'a/b'",
            "inputs::test_a_raters_name_that_reads_like_another_or_holds_a_path_is_refused",
        ),
        (
            "a look-alike rater in a ratings file",
            "inputs::test_an_import_naming_a_look_alike_rater_is_refused_whole",
        ),
    ],
    "the fourth pass: messages": [
        (
            "two packages merged, one with two raters",
            "packages::test_a_refusal_among_several_packages_names_its_file",
        ),
        (
            "an import killed midway leaves its scratch folder",
            "inputs::test_an_import_killed_midway_leaves_no_folder_the_next_one_keeps",
        ),
        (
            "assign --on-demand --raters ana,ben",
            "inputs::test_assign_on_demand_adds_the_raters_it_names",
        ),
    ],
    "the fourth pass: special files never hang the tool": [
        (
            "a pipe as a manifest, image, CSV, rubric, map, anchors, folder image or study.sqlite",
            "inputs::test_a_pipe_named_as_an_input_is_one_line_not_a_hang",
        ),
        (
            "/dev/zero as a manifest, a 5 GB sparse image",
            "inputs::test_dev_zero_as_a_manifest_and_a_huge_sparse_image_are_refused_by_size",
        ),
        (
            "a pipe as keys.toml at app start",
            "inputs::test_a_pipe_named_keys_toml_is_ignored_with_a_word",
        ),
    ],
    "the fourth pass: media is not trusted as found": [
        (
            "a link in media/ to a lead's private file",
            "media::test_a_link_in_media_is_never_followed",
        ),
        (
            "a truncated image in the study (a disk error)",
            "media::test_a_damaged_image_is_the_studys_not_a_packages",
        ),
        (
            "an untouched package carrying the study's damaged image",
            "media::test_a_package_that_carried_the_studys_damaged_image_is_not_called_altered",
        ),
    ],
    "the fourth pass: a rater's role cannot stop others getting work": [
        (
            "session-level advisory locks on every claim number",
            "server::test_a_rater_holding_advisory_locks_stops_no_one_from_claiming",
        ),
        (
            "many claims in one transaction kept open",
            "server::test_a_rater_cannot_hold_many_claims_in_one_open_transaction",
        ),
        (
            "the server's timeouts lifted before claiming",
            "server::test_a_rater_that_lifts_the_servers_timeouts_cannot_claim",
        ),
        ("connections without limit", "server::test_a_rater_role_has_a_connection_limit"),
        (
            "a transaction held open while the lead runs `annotator roles`",
            "server::test_roles_while_a_rater_holds_a_transaction_open_waits_then_names_them",
        ),
        (
            "the lead's settings (the human sample, the dealing seed)",
            "server::test_a_rater_role_reads_only_the_settings_its_app_needs",
        ),
    ],
    "what a rater must still be able to do": [
        (
            "label, silent anchors, pairs and calibration as a rater role",
            "server::test_a_rater_role_labels_sees_silent_anchors_votes_on_pairs_and_calibrates",
        ),
        ("take items on demand as rater roles", "server::test_a_rater_role_takes_items_on_demand"),
    ],
}


def _tests_in(module: str) -> set[str]:
    tree = ast.parse((HERE / f"test_security_{module}.py").read_text(encoding="utf-8"))
    return {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test_")
    }


def test_every_attack_test_is_listed_and_every_listed_test_exists() -> None:
    listed = [ref for rows in ATTACKS.values() for _, ref in rows]
    assert len(listed) == len(set(listed)), "a test is listed twice"
    modules = {ref.split("::")[0] for ref in listed}
    present = {f"{m}::{t}" for m in modules for t in _tests_in(m)}
    assert sorted(set(listed) - present) == [], "listed attacks whose test is gone"
    assert sorted(present - set(listed)) == [], "attack tests missing from ATTACKS"


def test_every_point_of_the_issue_has_an_attack() -> None:
    points = [p.split(" ", 1)[0] for p in ATTACKS if p[0].isdigit()]
    assert points == [str(i) for i in range(1, 12)]
    assert all(ATTACKS[p] for p in ATTACKS)
