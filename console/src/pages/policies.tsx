import { NotBuilt } from '../ui/page.tsx';

export default function Page() {
  return <NotBuilt title="Limits" />;
}
