import pytest

from firmware.config import Config, ConfigError, load_config, with_overrides


def write(tmp_path, text):
    path = tmp_path / "cubetower.toml"
    path.write_text(text)
    return path


def test_no_file_means_defaults():
    config = load_config(None)
    assert config == Config()
    assert config.server.port == 8000 and config.camera.source == "auto"


def test_a_full_file_is_read_into_types(tmp_path):
    config = load_config(
        write(
            tmp_path,
            'data_dir = "/tmp/ct"\n[server]\nport = 9000\n[camera]\nsource = "webcam:1"\n'
            "[watcher]\nstill_seconds = 1\n[panel]\nenabled = false\n",
        )
    )
    assert config.server.port == 9000
    assert config.camera.source == "webcam:1"
    assert config.watcher.still_seconds == 1.0 and isinstance(config.watcher.still_seconds, float)
    assert str(config.data_path) == "/tmp/ct"
    assert config.panel.enabled is False and config.panel.read_now_pin == 17


def test_the_readings_kept_are_a_top_level_setting(tmp_path):
    assert Config().keep_readings == 5000
    assert load_config(write(tmp_path, "keep_readings = 20000\n")).keep_readings == 20000


def test_stream_slots_and_api_threads_are_set_apart(tmp_path):
    config = load_config(write(tmp_path, "[server]\nthreads = 4\nstreams = 80\n"))
    assert (config.server.threads, config.server.streams) == (4, 80)


def test_unknown_key_is_named_with_the_allowed_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key 'prot'.*allowed keys are host, port"):
        load_config(write(tmp_path, "[server]\nprot = 9000\n"))


def test_unknown_section_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="unknown key 'camra'"):
        load_config(write(tmp_path, "[camra]\nsource = 'demo'\n"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[server]\nport = "eighty"\n', "'port' must be int"),
        ("[server]\nport = 70000\n", "port must be 1-65535"),
        ("[server]\nport = true\n", "'port' must be int"),
        ("[server]\nstreams = 0\n", "streams must be 1-200, got 0"),
        ("[server]\nstreams = 5000\n", "streams must be 1-200"),
        ("[server]\nthreads = 0\n", "threads must be 1-64, got 0"),
        ("[server\n", "not valid TOML"),
    ],
)
def test_wrong_values_are_clear_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_a_file_that_is_not_text_or_not_a_file_is_a_clear_error(tmp_path):
    binary = tmp_path / "garbage.toml"
    binary.write_bytes(b"[server]\nport = 8000\n\x8b\xff\x00")
    with pytest.raises(ConfigError, match="is not a text file"):
        load_config(binary)
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(tmp_path)  # a folder


def test_flags_override_the_file(tmp_path):
    config = load_config(write(tmp_path, "[server]\nport = 9000\nhost = '127.0.0.1'\n"))
    merged = with_overrides(config, source="demo", port=8123, host=None, data_dir=str(tmp_path))
    assert merged.server.port == 8123 and merged.server.host == "127.0.0.1"
    assert merged.camera.source == "demo"
    assert merged.data_path == tmp_path


def test_panel_section_is_checked_by_the_panel_config(tmp_path):
    with pytest.raises(ConfigError, match=r"\[panel\].*unknown.*'led_pin'"):
        load_config(write(tmp_path, "[panel]\nled_pin = 4\n"))


def test_extra_host_names_are_a_list_of_names(tmp_path):
    config = load_config(
        write(tmp_path, '[server]\nallowed_hosts = ["cubetower.club.lan", "*.home.arpa"]\n')
    )
    assert config.server.allowed_hosts == ("cubetower.club.lan", "*.home.arpa")
    assert Config().server.allowed_hosts == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"pi.lan"', "must be a list of strings"),
        ("[1]", "must be a list of strings"),
        ('["http://pi.lan"]', "'http://pi.lan' is not a host name"),
        ('["pi.lan:8000"]', "'pi.lan:8000' is not a host name"),
        ('[""]', "'' is not a host name"),
    ],
)
def test_a_wrong_host_name_is_refused_at_start(tmp_path, value, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, f"[server]\nallowed_hosts = {value}\n"))


def test_the_camera_settings_are_read(tmp_path):
    config = load_config(
        write(
            tmp_path,
            "[camera]\nlens_height_mm = 250\nmains_hz = 50\ncapture_timeout_seconds = 1.5\n"
            "lock_exposure = false\n[watcher]\nstall_seconds = 20\n",
        )
    )
    assert config.camera.lens_height_mm == 250.0 and config.camera.mains_hz == 50
    assert config.camera.capture_timeout_seconds == 1.5 and config.camera.lock_exposure is False
    assert config.watcher.stall_seconds == 20.0


def test_camera_defaults_guess_nothing():
    """No height (autofocus once), no mains frequency (the camera's default): the user says."""
    camera = Config().camera
    assert camera.lens_height_mm == 0 and camera.mains_hz == 0 and camera.lock_exposure


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[camera]\nlens_height_mm = 25\n", r"in millimetres \(25 cm is 250\)"),
        ("[camera]\nlens_height_mm = -250\n", "in millimetres"),
        ("[camera]\nmains_hz = 55\n", "mains_hz must be 50, 60 or 0"),
        ("[camera]\ncapture_timeout_seconds = 0\n", "must be more than 0"),
        ("[watcher]\nstall_seconds = 1\n", "stall_seconds .* must be longer than"),
        ("[camera]\nfocus = 'auto'\n", "unknown key 'focus'"),
    ],
)
def test_camera_settings_that_cannot_work_are_refused_at_start(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[camera]\nwidth = 0\n", r"\[camera\]: width must be at least 64 pixels.*got 0"),
        ("[camera]\nwidth = 63\n", r"\[camera\]: width must be at least 64 pixels.*got 63"),
        ("[camera]\nheight = -1\n", r"\[camera\]: height must be at least 64 pixels.*got -1"),
        ("[camera]\nheight = 63\n", r"\[camera\]: height must be at least 64 pixels"),
        ("[watcher]\npoll_seconds = 0\n", r"\[watcher\]: poll_seconds must be more than 0"),
        ("[watcher]\npoll_seconds = -0.1\n", r"poll_seconds must be more than 0, got -0.1"),
        (
            "[watcher]\npoll_seconds = 10\n",
            r"\[watcher\]: poll_seconds \(10\) must be shorter than stall_seconds \(10\)",
        ),
        ("[watcher]\nstill_seconds = -1\n", r"\[watcher\]: still_seconds must be 0-60"),
        # a drop would never be read while the players wait
        ("[watcher]\nstill_seconds = 1e12\n", r"still_seconds must be 0-60 \(seconds\), "
                                                 r"got 1e\+12"),
        # every frame would be refused by the counter (and a Pi's memory would not hold it)
        ("[camera]\nwidth = 100000000\n", r"width x height must be at most 64 megapixels.*"
                                         r"got 100000000 x 648"),
        ("[camera]\nwidth = 10000\nheight = 6401\n", "at most 64 megapixels"),
        ("[vision]\npicture_width = 0\n", r"\[vision\]: picture_width must be at least 1"),
        ("[vision]\npicture_width = -960\n", "picture_width must be at least 1.*got -960"),
        ("[camera]\ncapture_timeout_seconds = -1\n", "must be more than 0, got -1"),
        ("[watcher]\npoll_seconds = nan\n", "'poll_seconds' must be a finite number, got nan"),
        ("[watcher]\nstall_seconds = inf\n", "'stall_seconds' must be a finite number"),
        ("[camera]\ncapture_timeout_seconds = nan\n", "must be a finite number"),
        ("[camera]\nlens_height_mm = inf\n", "'lens_height_mm' must be a finite number"),
        ("[watcher]\nstill_seconds = -inf\n", "must be a finite number"),
        # fewer readings than those keeping their pictures (and a reading is every event's mark)
        ("keep_readings = 199\n", r"keep_readings must be at least 200 .*got 199"),
        ("keep_readings = 0\n", "keep_readings must be at least 200"),
        ('keep_readings = "5000"\n', "'keep_readings' must be int"),
    ],
)
def test_numbers_that_cannot_work_are_refused_at_start(tmp_path, text, message):
    """Each one was accepted and then broke the device: a traceback at every reading
    (picture_width = 0), a busy CPU core (poll_seconds = 0), a camera asked for no picture."""
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


@pytest.mark.parametrize(
    "text",
    [
        "[camera]\nwidth = 64\nheight = 64\n",
        "[camera]\nwidth = 10000\nheight = 6400\n",
        "[watcher]\nstill_seconds = 60\n",
        "[watcher]\npoll_seconds = 0.01\nstill_seconds = 0\n",
        "[watcher]\npoll_seconds = 9.9\n",
        "[vision]\npicture_width = 1\n",
        "[vision]\npicture_width = 4000\n",
        "keep_readings = 200\n",
    ],
)
def test_the_smallest_numbers_that_work_are_accepted(tmp_path, text):
    load_config(write(tmp_path, text))


def test_the_smallest_camera_picture_is_the_counters():
    """The settings copy the counter's smallest side rather than import OpenCV with it."""
    from firmware.config import MIN_PICTURE_SIDE
    from vision.counter import MIN_SIDE

    assert MIN_PICTURE_SIDE == MIN_SIDE


@pytest.mark.parametrize("port", [99999, 65536, -5, -1])
def test_a_port_flag_outside_the_tcp_range_is_refused(port):
    """The OS would listen on 99999 - 65536, waitress fails with a traceback on -5: the CLI
    prints the ConfigError instead, as it does the file's port."""
    with pytest.raises(ConfigError, match=rf"--port must be 1-65535 .*got {port}"):
        with_overrides(Config(), port=port)


@pytest.mark.parametrize("port", [1, 65535, 0])
def test_a_port_flag_inside_the_range_or_0_is_used(port):
    """0: any free port (the terminal prints it); the tests of the CLI listen so."""
    assert with_overrides(Config(), port=port).server.port == port
