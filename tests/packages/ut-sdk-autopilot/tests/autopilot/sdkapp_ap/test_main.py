from autopilot.testcase import AutopilotTestCase


class MainViewTestCase(AutopilotTestCase):
    def test_starts(self):
        self.assertTrue(True)
